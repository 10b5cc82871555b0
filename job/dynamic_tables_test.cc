// A click model with dynamic tables in a model file and an export folder:
// keys and values round-trip, a key the model lacks reads as the ps would
// make it, and a delta drops evicted keys and adds new ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>

#include "common/tensor_file.h"
#include "job/export_files.h"
#include "job/model_file.h"
#include "job/trained_rows.h"
#include "model/ctr/initial_row.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

class DynamicTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("dynamic_tables_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    job_.dataset = "criteo";
    job_.model = "wide_deep";
    job_.input = 13;
    job_.num_classes = 2;
    job_.click_model = true;
    job_.num_fields = 26;
    job_.table_rows = 0;
    model_ = MakeJobModel(job_).value();
    dynamic_.min_count = 1;
    dynamic_.seed = 99;
    dynamic_.init_scale = 0.25f;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Variables at k, each table holding `keys` with rows k + key.
  std::vector<Tensor> Params(float k, const std::vector<int64_t>& keys) {
    std::vector<Tensor> params;
    for (const VariableSpec& v : model_->variables()) {
      params.emplace_back(v.dtype, v.shape);
      std::fill(params.back().f32(), params.back().f32() + params.back().num_elements(), k);
    }
    dynamic_.keys.clear();
    const int64_t n = static_cast<int64_t>(keys.size());
    for (const EmbeddingTableSpec& t : model_->tables()) {
      Tensor rows(DType::kFloat32, {n, t.dim});
      Tensor key_tensor(DType::kInt64, {n});
      for (int64_t i = 0; i < n; ++i) {
        key_tensor.i64()[i] = keys[i];
        std::fill(rows.f32() + i * t.dim, rows.f32() + (i + 1) * t.dim, k + keys[i]);
      }
      params.push_back(std::move(rows));
      dynamic_.keys.push_back(std::move(key_tensor));
    }
    return params;
  }
  std::string Write(const std::string& name, const std::vector<Tensor>& params) {
    const std::string path = (dir_ / name).string();
    const Status s = WriteModelFile(path, job_, *model_, params, dynamic_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return path;
  }
  // Row `key` of table 0 as GatherTrainedRows reads it.
  std::vector<float> RowOf(const TrainedModel& trained, int64_t key) {
    TableRowIds ids(model_->tables().size());
    ids[0] = {key};
    std::vector<Tensor> rows;
    const Status s = GatherTrainedRows(trained, *model_, ids, &rows);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::vector<float>(rows[0].f32(), rows[0].f32() + rows[0].num_elements());
  }

  fs::path dir_;
  Job job_;
  std::unique_ptr<Model> model_;
  DynamicTables dynamic_;
};

TEST_F(DynamicTablesTest, AModelFileKeepsKeysRowsAndHowAMissingKeyReads) {
  const std::string path = Write("model.bin", Params(1, {-5, 3, 1000000007}));
  StatusOr<TrainedModel> read = ReadModelFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->table_rows, 0);
  ASSERT_EQ(read->dynamic.keys.size(), model_->tables().size());
  EXPECT_EQ(read->dynamic.keys[0].i64()[2], 1000000007);
  EXPECT_EQ(read->dynamic.seed, 99u);
  EXPECT_EQ(read->dynamic.init_scale, 0.25f);
  const int64_t dim = model_->tables()[0].dim;
  EXPECT_EQ(RowOf(*read, 3), std::vector<float>(dim, 4.0f));
  EXPECT_EQ(RowOf(*read, -5), std::vector<float>(dim, -4.0f));
  // A key the model lacks: the row the ps would create for it.
  std::vector<float> initial(dim);
  InitialRow(99, model_->tables()[0].name, 4, 0.25f, dim, initial.data());
  EXPECT_EQ(RowOf(*read, 4), initial);
  // ... or zeros where a key needs several sightings first.
  read->dynamic.min_count = 2;
  EXPECT_EQ(RowOf(*read, 4), std::vector<float>(dim, 0.0f));
}

TEST_F(DynamicTablesTest, KeysOutOfOrderOrNotFittingTheRowsAreRefused) {
  std::vector<Tensor> params = Params(1, {1, 2, 3});
  dynamic_.keys[0].i64()[1] = 5;  // 1, 5, 3
  Status s = WriteModelFile((dir_ / "bad.bin").string(), job_, *model_, params, dynamic_);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("ascending"), std::string::npos) << s.message();
  params = Params(1, {1, 2, 3});
  dynamic_.keys[1] = Tensor(DType::kInt64, {2});
  dynamic_.keys[1].i64()[1] = 1;
  s = WriteModelFile((dir_ / "bad.bin").string(), job_, *model_, params, dynamic_);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("keys but not as many rows"), std::string::npos) << s.message();
}

TEST_F(DynamicTablesTest, ADeltaDropsEvictedKeysAndAddsNewOnes) {
  Write(BaseFileName(100), Params(1, {2, 4, 6, 8}));
  const EmbeddingTableSpec& table = model_->tables()[0];
  NamedTensors dense;
  const std::vector<Tensor> at2 = Params(2, {});
  for (size_t i = 0; i < model_->variables().size(); ++i) {
    dense.emplace_back(model_->variables()[i].name, at2[i]);
  }
  // Changed: 9 (new), 4 (written), 6 (evicted, then created again); removed: 2, 6.
  const std::vector<int64_t> changed = {9, 4, 6};
  ChangedTableRows rows{table.name, Tensor(DType::kInt64, {3}),
                        Tensor(DType::kFloat32, {3, table.dim}), Tensor(DType::kInt64, {2})};
  for (int64_t i = 0; i < 3; ++i) {
    rows.ids.i64()[i] = changed[i];
    std::fill(rows.rows.f32() + i * table.dim, rows.rows.f32() + (i + 1) * table.dim, -changed[i]);
  }
  rows.removed.i64()[0] = 6;
  rows.removed.i64()[1] = 2;
  ASSERT_TRUE(WriteDeltaFile((dir_ / DeltaFileName(150)).string(), 100, 100, dense, {rows}).ok());
  StatusOr<ExportedModel> m = LoadExport(dir_.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->step, 150);
  const Tensor& keys = m->trained.dynamic.keys[0];
  EXPECT_EQ(std::vector<int64_t>(keys.i64(), keys.i64() + keys.num_elements()),
            (std::vector<int64_t>{4, 6, 8, 9}));
  EXPECT_EQ(RowOf(m->trained, 4), std::vector<float>(table.dim, -4.0f));
  EXPECT_EQ(RowOf(m->trained, 6), std::vector<float>(table.dim, -6.0f));
  EXPECT_EQ(RowOf(m->trained, 8), std::vector<float>(table.dim, 9.0f));  // the base's
  EXPECT_EQ(RowOf(m->trained, 9), std::vector<float>(table.dim, -9.0f));
  // The other tables are the base's.
  EXPECT_EQ(m->trained.dynamic.keys[1].num_elements(), 4);
}

}  // namespace
}  // namespace pst
