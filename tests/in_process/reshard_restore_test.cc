// Resharding through real ps shards over the in-process transport: Adam
// state of a partitioned variable, a whole one and a table's rows, saved by
// 2 shards, restored and saved again by 3, then 1, then 2 shards, is the
// state the 2 shards first wrote, bit for bit; and training goes on from it.
// No sockets, no processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "chief/checkpoints/checkpointer.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kCluster = 31;
constexpr int64_t kDim = 2;

Placement PlacementOver(int shards) {
  PlacementOptions options;
  options.num_shards = shards;
  options.partition_bytes = 24;  // w [6,3]: 72 B in 3 slices of 2 rows
  return Placement::Compute(
             WithGlobalStep({{"w", DType::kFloat32, {6, 3}}, {"b", DType::kFloat32, {3}}}), options,
             {{"t", kDim, 50}})
      .value();
}

Tensor Filled(const Shape& shape, float value) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = value + 0.01f * i;
  return t;
}

// `num_shards` ps writing their parts into `dir`, initialized with Adam
// and the table seeded, and a chief and a worker client to them.
class Shards {
 public:
  Shards(int num_shards, const std::string& dir)
      : placement_(PlacementOver(num_shards)),
        shards_(num_shards, nullptr, nullptr, std::vector<std::string>(num_shards, dir)),
        chief_(shards_.Client(placement_, kCluster, wire::Role::Chief)),
        worker_(shards_.Client(placement_, kCluster)),
        admin_(chief_.get()),
        checkpointer_(dir, 100, kCluster, &admin_) {
    ShardConfig config;
    config.optimizer.name = "adam";
    config.optimizer.learning_rate = 0.1f;
    config.global_step_variable = kGlobalStepName;
    TableSettings tables;
    tables.seed = 5;
    EXPECT_TRUE(
        admin_
            .Initialize(config,
                        {Tensor(DType::kInt64, {}), Filled({6, 3}, 1.0f), Filled({3}, -1.0f)}, {},
                        tables)
            .ok());
  }

  // One step: pull w, b and rows {1, 2, 5, 8, 13, 22} (on every shard of 2
  // or 3), push gradients for all of them.
  void Train(float gradient) {
    std::vector<TableRows> tables(1);
    tables[0].ids = {1, 2, 5, 8, 13, 22};
    std::vector<Tensor> values;
    ASSERT_TRUE(worker_->Pull({1, 2}, &values, &tables).ok());
    const Tensor rows = Filled({6, kDim}, gradient);
    auto pushed = worker_->Push({1, 2}, {Filled({6, 3}, gradient), Filled({3}, -gradient)},
                                /*increment_global_step=*/true, tables, {rows});
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  }
  void RestoreNewest() {
    auto newest = checkpointer_.FindNewest();
    ASSERT_TRUE(newest.ok() && newest->has_value()) << newest.status().ToString();
    ASSERT_TRUE(checkpointer_.Restore(**newest).ok());
  }
  void Save(int64_t step) { ASSERT_TRUE(checkpointer_.Save(step, 0).ok()); }
  // w, b and the rows of ids 0..24 as the shards hold them.
  std::vector<float> Values() {
    std::vector<TableRows> tables(1);
    for (int64_t id = 0; id < 25; ++id) tables[0].ids.push_back(id);
    std::vector<Tensor> values;
    EXPECT_TRUE(worker_->Pull({1, 2}, &values, &tables).ok());
    std::vector<float> out;
    for (const Tensor& t : values) out.insert(out.end(), t.f32(), t.f32() + t.num_elements());
    out.insert(out.end(), tables[0].rows.f32(),
               tables[0].rows.f32() + tables[0].rows.num_elements());
    return out;
  }
  int64_t GlobalStep() {
    StatusOr<int64_t> step = chief_->GlobalStep();
    return step.ok() ? *step : -1;
  }

 private:
  const Placement placement_;
  InProcessShards shards_;
  std::unique_ptr<PsClient> chief_, worker_;
  ShardAdmin admin_;
  Checkpointer checkpointer_;
};

// Every tensor of a checkpoint's parts: name (per part for the shard's own
// entries) to dtype, shape and bytes.
std::map<std::string, std::string> Contents(const std::string& folder, int parts) {
  std::map<std::string, std::string> out;
  for (int k = 0; k < parts; ++k) {
    StatusOr<NamedTensors> part = ReadTensorFile(folder + "/" + PartFileName(k));
    EXPECT_TRUE(part.ok()) << part.status().ToString();
    if (!part.ok()) return {};
    for (const auto& [name, t] : *part) {
      const bool per_part = name[0] == '@' || name.rfind("t@", 0) == 0;
      out[per_part ? PartFileName(k) + ":" + name : name] =
          std::string(DTypeName(t.dtype())) + ShapeToString(t.shape()) +
          std::string(static_cast<const char*>(t.data()), t.num_bytes());
    }
  }
  return out;
}

class ReshardRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  const std::string dir_ =
      (fs::path(::testing::TempDir()) / ("reshard_restore_test_" + std::to_string(getpid())))
          .string();
};

TEST_F(ReshardRestoreTest, TwoPsToThreeToOneToTwoKeepsEveryValueAndSlotBitForBit) {
  std::vector<float> trained;
  {
    Shards two(2, dir_);
    for (int step = 0; step < 4; ++step) two.Train(0.5f + step);
    two.Save(10);
    trained = two.Values();
  }
  int64_t step = 10;
  for (int shards : {3, 1, 2}) {
    SCOPED_TRACE(std::to_string(shards) + " shards");
    Shards next(shards, dir_);
    next.RestoreNewest();
    EXPECT_EQ(next.GlobalStep(), 4);
    EXPECT_EQ(next.Values(), trained);
    next.Save(++step);
  }
  EXPECT_EQ(Contents(dir_ + "/" + Checkpointer::Name(13), 2),
            Contents(dir_ + "/" + Checkpointer::Name(10), 2));
  EXPECT_FALSE(fs::exists(dir_ + "/resharding"));
}

// Adam's moments and update counts came along: a step after resharding
// moves every value as the same step on the original shards does.
TEST_F(ReshardRestoreTest, TrainingOnAnotherShardCountTakesTheSameStep) {
  std::vector<float> on_two;
  {
    Shards two(2, dir_);
    for (int step = 0; step < 3; ++step) two.Train(0.3f * (step + 1));
    two.Save(10);
    two.Train(2.0f);
    on_two = two.Values();
  }
  Shards three(3, dir_);
  three.RestoreNewest();
  three.Train(2.0f);
  EXPECT_EQ(three.Values(), on_two);
  EXPECT_EQ(three.GlobalStep(), 4);
}

}  // namespace
}  // namespace pst
