// Embedding tables over the in-process transport: a PsClient pulls and
// pushes rows by id across two shards (float32 and bfloat16 wires), and a
// shard refuses malformed sparse tensors and ids of another shard, keeps
// its rows and serves on. A dynamic table is not changed by the chief's
// pulls, and the chief lists its rows and cuts its changes.
#include <gtest/gtest.h>

#include <algorithm>

#include "ps/ps_service.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 78;
constexpr int64_t kDim = 2;

class PsSparseServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto placement = Placement::Compute(WithGlobalStep({}), {2}, {{"t", kDim, 10}});
    ASSERT_TRUE(placement.ok());
    placement_ = std::make_unique<Placement>(*placement);
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.global_step_variable = kGlobalStepName;
    TableSettings tables;
    tables.seed = 3;
    ASSERT_TRUE(ShardAdmin(&*shards_.Client(*placement_, kCluster, wire::Role::Chief))
                    .Initialize(config, {Tensor(DType::kInt64, {})}, {}, tables)
                    .ok());
  }
  static std::vector<float> Initial(int64_t id) {
    std::vector<float> row(kDim);
    InitialRow(3, "t", id, 0.05f, kDim, row.data());
    return row;
  }
  static std::vector<float> RowOf(const TableRows& t, int64_t i) {
    return std::vector<float>(t.rows.f32() + i * kDim, t.rows.f32() + (i + 1) * kDim);
  }
  // A pull request for ids of "t", with a tensor built by `make`.
  OutgoingMessage PullOf(Tensor ids, wire::TensorRole role = wire::TensorRole::RowIds) {
    OutgoingMessage m;
    m.type = wire::MessageType::PullRequest;
    m.tensors.push_back({"t", 0, std::move(ids), role});
    return m;
  }

  InProcessShards shards_{2};
  std::unique_ptr<Placement> placement_;
};

TEST_F(PsSparseServiceTest, RowsArePulledAndPushedByIdAcrossShards) {
  for (DType wire : {DType::kFloat32, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(wire));
    SetUp();  // fresh rows for each wire
    auto worker = shards_.Client(*placement_, kCluster, wire::Role::Worker, 0, "", wire);
    std::vector<TableRows> tables(1);
    tables[0].ids = {7, 2, 4, 1};  // shards 1, 0, 0, 1
    std::vector<Tensor> none;
    ASSERT_TRUE(worker->Pull({}, &none, &tables).ok());
    // bfloat16 keeps 8 bits of mantissa: 1 part in 256.
    const float tolerance = wire == DType::kFloat32 ? 0.0f : 4e-3f;
    for (int64_t i = 0; i < 4; ++i) {
      const std::vector<float> want = Initial(tables[0].ids[i]), got = RowOf(tables[0], i);
      for (int d = 0; d < kDim; ++d) EXPECT_NEAR(got[d], want[d], tolerance) << "row " << i;
    }
    EXPECT_EQ(tables[0].versions, (std::vector<int64_t>{0, 0, 0, 0}));
    Tensor grad(DType::kFloat32, {4, kDim});
    for (int64_t i = 0; i < 4 * kDim; ++i) grad.f32()[i] = 0.5f;
    StatusOr<PushSummary> pushed = worker->Push({}, {}, true, tables, {grad});
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    EXPECT_EQ(pushed->applied, 4u);
    EXPECT_EQ(pushed->global_step, 1);
    ASSERT_TRUE(worker->Pull({}, &none, &tables).ok());
    for (int64_t i = 0; i < 4; ++i) {
      const std::vector<float> want = Initial(tables[0].ids[i]), got = RowOf(tables[0], i);
      for (int d = 0; d < kDim; ++d) EXPECT_NEAR(got[d], want[d] - 0.5f, tolerance + 1e-6f);
    }
    EXPECT_EQ(tables[0].versions, (std::vector<int64_t>{1, 1, 1, 1}));
  }
}

TEST_F(PsSparseServiceTest, MalformedSparseTensorsAreRefusedAndTheShardServesOn) {
  auto ps0 = shards_.Connect(0, kCluster);
  // Row ids that are not int64 [k].
  auto reply = ps0->Call(PullOf(Tensor(DType::kFloat32, {2})));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("must be int64 [k]"), std::string::npos)
      << reply.status().ToString();
  // An id of the other shard, and one out of range.
  Tensor odd(DType::kInt64, {1});
  odd.i64()[0] = 3;
  reply = ps0->Call(PullOf(odd));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("table 't': id 3 belongs to shard 1"), std::string::npos)
      << reply.status().ToString();
  odd.i64()[0] = 12;
  reply = ps0->Call(PullOf(odd));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("id 12 is out of range [0, 10)"), std::string::npos);
  // A push with ids but no rows or versions after them.
  OutgoingMessage push;
  push.type = wire::MessageType::PushRequest;
  Tensor ids(DType::kInt64, {1});
  ids.i64()[0] = 2;
  push.tensors.push_back({"t", 0, ids, wire::TensorRole::RowIds});
  reply = ps0->Call(push);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("row ids, rows and row versions, in that order"),
            std::string::npos)
      << reply.status().ToString();
  // Rows of the wrong width.
  push.tensors.push_back({"t", 0, Tensor(DType::kFloat32, {1, kDim + 1})});
  push.tensors.push_back({"t", 0, Tensor(DType::kInt64, {1}), wire::TensorRole::RowVersions});
  reply = ps0->Call(push);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("expected [1,2]"), std::string::npos)
      << reply.status().ToString();
  // A role this build does not know.
  reply = ps0->Call(PullOf(ids, static_cast<wire::TensorRole>(9)));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("unknown role 9"), std::string::npos)
      << reply.status().ToString();
  // Nothing changed, and the shard serves on.
  reply = ps0->Call(PullOf(ids));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  const TensorView& row = reply->tensors()[0];
  EXPECT_EQ(std::vector<float>(row.f32(), row.f32() + kDim), Initial(2));
  EXPECT_EQ(reply->tensors()[1].i64()[0], 0);
}

// A dynamic table of 2 rows per shard: the chief's pulls (its evaluation)
// read keys it lacks as a pull would create them, and create, evict and
// count nothing; the chief lists a shard's rows and cuts its changes.
TEST_F(PsSparseServiceTest, ADynamicTableIsNotChangedByTheChiefsPullsAndIsListedAndCut) {
  InProcessShards shards(2);
  auto placement = Placement::Compute(WithGlobalStep({}), {2}, {{"t", kDim, 0}});
  ASSERT_TRUE(placement.ok());
  ShardConfig config;
  config.optimizer.learning_rate = 1.0f;
  config.global_step_variable = kGlobalStepName;
  TableSettings tables;
  tables.seed = 3;
  tables.capacity = 2;
  auto chief = shards.Client(*placement, kCluster, wire::Role::Chief);
  ShardAdmin admin(&*chief);
  ASSERT_TRUE(admin.Initialize(config, {Tensor(DType::kInt64, {})}, {}, tables).ok());
  ASSERT_TRUE(admin.CutChangedRows(false, SteadyClock().Now() + std::chrono::seconds(5)).ok());
  auto worker = shards.Client(*placement, kCluster, wire::Role::Worker, 0);
  std::vector<TableRows> rows(1);
  rows[0].ids = {2, 4};  // both on shard 0, which is full then
  std::vector<Tensor> none;
  ASSERT_TRUE(worker->Pull({}, &none, &rows).ok());

  std::vector<TableRows> evaluated(1);
  evaluated[0].ids = {6, 8, 2};
  ASSERT_TRUE(chief->Pull({}, &none, &evaluated).ok());
  EXPECT_EQ(RowOf(evaluated[0], 0), Initial(6));
  EXPECT_EQ(RowOf(evaluated[0], 1), Initial(8));
  EXPECT_EQ(RowOf(evaluated[0], 2), Initial(2));

  // Shard 0 still holds 2 and 4, in one listing call of 5 rows or two of 1.
  for (const int64_t at_a_time : {5, 1}) {
    std::vector<int64_t> keys;
    for (int64_t cursor = 0; cursor >= 0;) {
      StatusOr<ListedRows> listed = admin.ListTableRows(0, "t", cursor, at_a_time);
      ASSERT_TRUE(listed.ok()) << listed.status().ToString();
      keys.insert(keys.end(), listed->ids.i64(), listed->ids.i64() + listed->ids.num_elements());
      cursor = listed->next;
    }
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<int64_t>{2, 4})) << at_a_time << " at a time";
  }
  EXPECT_FALSE(admin.ListTableRows(0, "no_such_table", 0, 5).ok());

  // The worker's rows since the cut: created 2 and 4; then 6 evicts 2.
  rows[0].ids = {6};
  ASSERT_TRUE(worker->Pull({}, &none, &rows).ok());
  StatusOr<std::vector<CutRows>> cut =
      admin.CutChangedRows(true, SteadyClock().Now() + std::chrono::seconds(5));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  ASSERT_EQ(cut->size(), 1u);
  const CutRows& t = (*cut)[0];
  std::vector<int64_t> changed(t.ids.i64(), t.ids.i64() + t.ids.num_elements());
  std::sort(changed.begin(), changed.end());
  EXPECT_EQ(changed, (std::vector<int64_t>{4, 6}));  // 2 was evicted
  ASSERT_EQ(t.removed.num_elements(), 1);
  EXPECT_EQ(t.removed.i64()[0], 2);
}

}  // namespace
}  // namespace pst
