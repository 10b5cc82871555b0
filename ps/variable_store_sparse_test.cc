// A store's embedding tables: pulls by id, async pushes (staleness per
// row), the sync step's average against a one-process reference, refusals
// that change nothing, and checkpoints of the rows that exist.
#include <glog/logging.h>
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <limits>
#include <map>

#include "ps/variable_store.h"

namespace pst {
namespace {

constexpr int64_t kDim = 2;

struct RowGrad {
  std::vector<int64_t> ids;
  std::vector<float> rows;
  std::vector<int64_t> versions;
  SparseGradient View(const std::string& table = "t") const {
    return SparseGradient{table,
                          ids.data(),
                          static_cast<int64_t>(ids.size()),
                          DType::kFloat32,
                          Shape{static_cast<int64_t>(ids.size()), kDim},
                          rows.data(),
                          versions.data()};
  }
};

// Counts the lines glog writes while it lives.
class LogLines : public google::LogSink {
 public:
  LogLines() { google::AddLogSink(this); }
  ~LogLines() override { google::RemoveLogSink(this); }
  void send(google::LogSeverity, const char*, const char*, int, const std::tm*, const char* message,
            size_t length) override {
    ++count_;
    last_.assign(message, length);
  }
  int count() const { return count_; }
  const std::string& last() const { return last_; }

 private:
  int count_ = 0;
  std::string last_;
};

class SparseStoreTest : public ::testing::Test {
 protected:
  void Init(TrainingMode mode = TrainingMode::kAsync, int replicas = 1,
            StalenessPolicy policy = StalenessPolicy::kApply, int64_t table_rows = 10) {
    InitStore(&store_, mode, replicas, policy, table_rows, "sgd");
  }
  static void InitStore(VariableStore* store, TrainingMode mode, int replicas,
                        StalenessPolicy policy, int64_t table_rows, const std::string& optimizer) {
    ShardConfig config;
    config.optimizer.name = optimizer;
    config.optimizer.learning_rate = 1.0f;
    config.mode = mode;
    config.replicas_to_aggregate = replicas;
    config.staleness_policy = policy;
    config.max_staleness = 0;
    EmbeddingTableConfig table;
    table.name = "t";
    table.dim = kDim;
    table.rows = table_rows;
    table.capacity = table_rows == 0 ? 100 : 0;
    table.seed = 5;
    ASSERT_TRUE(store->Initialize(config, {}, {table}).ok());
  }

  std::vector<float> Rows(const std::vector<int64_t>& ids,
                          std::vector<int64_t>* versions = nullptr) {
    return RowsOf(store_, ids, versions);
  }
  static std::vector<float> RowsOf(VariableStore& store, const std::vector<int64_t>& ids,
                                   std::vector<int64_t>* versions = nullptr) {
    std::vector<PulledRows> out;
    const Status pulled =
        store.PullRows({{"t", ids.data(), static_cast<int64_t>(ids.size())}}, &out);
    EXPECT_TRUE(pulled.ok()) << pulled.ToString();
    if (!pulled.ok()) return {};
    if (versions) versions->assign(out[0].versions.i64(), out[0].versions.i64() + ids.size());
    return std::vector<float>(out[0].rows.f32(), out[0].rows.f32() + ids.size() * kDim);
  }

  VariableStore store_;
};

TEST_F(SparseStoreTest, PullReturnsTheSeededInitialRows) {
  Init();
  const std::vector<float> rows = Rows({3, 7});
  float expected[kDim];
  InitialRow(5, "t", 7, 0.05f, kDim, expected);
  EXPECT_EQ(rows[2], expected[0]);
  EXPECT_EQ(rows[3], expected[1]);
}

TEST_F(SparseStoreTest, AsyncPushMovesOnlyTheTouchedRows) {
  Init();
  const std::vector<float> before = Rows({1, 2, 3});
  RowGrad g{{2}, {0.5f, -1.0f}, {0}};
  StatusOr<PushOutcome> pushed = store_.Push({}, false, {g.View()});
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->applied, 1u);
  std::vector<int64_t> versions;
  const std::vector<float> after = Rows({1, 2, 3}, &versions);
  EXPECT_EQ(after[0], before[0]);
  EXPECT_FLOAT_EQ(after[2], before[2] - 0.5f);
  EXPECT_FLOAT_EQ(after[3], before[3] + 1.0f);
  EXPECT_EQ(after[4], before[4]);
  EXPECT_EQ(versions, (std::vector<int64_t>{0, 1, 0}));
}

TEST_F(SparseStoreTest, TheDropPolicyDropsStaleRowsOnly) {
  Init(TrainingMode::kAsync, 1, StalenessPolicy::kDrop);
  RowGrad first{{4}, {1, 1}, {0}};
  ASSERT_TRUE(store_.Push({}, false, {first.View()}).ok());
  const std::vector<float> before = Rows({4, 5});
  // Row 4 was pulled at version 0 and is at 1 now: staleness 1 > 0.
  RowGrad late{{4, 5}, {1, 1, 1, 1}, {0, 0}};
  StatusOr<PushOutcome> pushed = store_.Push({}, false, {late.View()});
  ASSERT_TRUE(pushed.ok());
  EXPECT_EQ(pushed->dropped, 1u);
  EXPECT_EQ(pushed->applied, 1u);
  const std::vector<float> after = Rows({4, 5});
  EXPECT_EQ(after[0], before[0]);
  EXPECT_FLOAT_EQ(after[2], before[2] - 1.0f);
}

TEST_F(SparseStoreTest, RefusedPushesChangeNothing) {
  Init();
  const std::vector<float> before = Rows({1, 2});
  RowGrad out_of_range{{1, 12}, {1, 1, 1, 1}, {0, 0}};
  StatusOr<PushOutcome> refused = store_.Push({}, false, {out_of_range.View()});
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("'t'"), std::string::npos);
  EXPECT_NE(refused.status().message().find("12"), std::string::npos);
  RowGrad not_finite{{1, 2}, {1, 1, std::numeric_limits<float>::quiet_NaN(), 1}, {0, 0}};
  refused = store_.Push({}, false, {not_finite.View()});
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("not finite"), std::string::npos);
  RowGrad unknown{{1}, {1, 1}, {0}};
  EXPECT_EQ(store_.Push({}, false, {unknown.View("u")}).status().code(), Code::kNotFound);
  EXPECT_EQ(Rows({1, 2}), before);
}

// Sync: the step applies, per id, the sum of its rows over the step's N
// gradients divided by N; a stale push adds nothing.
TEST_F(SparseStoreTest, SyncStepAppliesTheSumOverNAndDropsStalePushes) {
  Init(TrainingMode::kSync, /*replicas=*/3);
  const std::vector<float> before = Rows({1, 2, 3});
  RowGrad a{{1, 2}, {3, 3, 6, 6}, {0, 0}};
  RowGrad b{{2, 2}, {1, 1, 2, 2}, {0, 0}};  // duplicate ids inside one push
  RowGrad c{{3}, {9, 0}, {0}};
  RowGrad stale{{1}, {100, 100}, {0}};
  ASSERT_TRUE(store_.SyncPush({}, 0, 0, 0, {a.View()}).ok());
  StatusOr<PushOutcome> old = store_.SyncPush({}, 1, -1, 0, {stale.View()});
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->stale);
  ASSERT_TRUE(store_.SyncPush({}, 1, 0, 0, {b.View()}).ok());
  EXPECT_EQ(Rows({1}), std::vector<float>(before.begin(), before.begin() + 2)) << "applied early";
  StatusOr<PushOutcome> last = store_.SyncPush({}, 2, 0, 0, {c.View()});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->completed_step, 0);
  // The one-process reference: the dense mean of the three gradients.
  std::map<int64_t, std::vector<double>> sum;
  for (const RowGrad* g : {&a, &b, &c}) {
    for (size_t i = 0; i < g->ids.size(); ++i) {
      auto& s = sum[g->ids[i]];
      s.resize(kDim);
      for (int d = 0; d < kDim; ++d) s[d] += g->rows[i * kDim + d];
    }
  }
  const std::vector<float> after = Rows({1, 2, 3});
  for (int r = 0; r < 3; ++r) {
    for (int d = 0; d < kDim; ++d) {
      const float reference = static_cast<float>(before[r * kDim + d] - sum[r + 1][d] / 3.0);
      EXPECT_FLOAT_EQ(after[r * kDim + d], reference) << "id " << r + 1 << " element " << d;
    }
  }
}

// The rows follow the learning-rate schedule as the dense variables do: a
// step decay of 0.5 per step moves a row by 1, then 0.5 (async: the step is
// the dense variables' update count; sync: the shard's step).
TEST(SparseScheduleTest, RowsFollowTheLearningRateSchedule) {
  for (TrainingMode mode : {TrainingMode::kAsync, TrainingMode::kSync}) {
    ShardConfig config;
    config.optimizer.name = "sgd";
    config.optimizer.learning_rate = 1.0f;
    config.lr_schedule = "step";
    config.lr_decay_steps = 1;
    config.lr_decay_rate = 0.5f;
    config.mode = mode;
    config.replicas_to_aggregate = 1;
    EmbeddingTableConfig table;
    table.name = "t";
    table.dim = kDim;
    table.rows = 10;
    table.seed = 5;
    Tensor w(DType::kFloat32, {2});
    VariableStore store;
    ASSERT_TRUE(store.Initialize(config, {{"w", w}}, {table}).ok());
    const int64_t id = 2;
    const auto row = [&] {
      std::vector<PulledRows> out;
      EXPECT_TRUE(store.PullRows({{"t", &id, 1}}, &out).ok());
      return out[0].rows.f32()[0];
    };
    const float before = row();
    const std::vector<float> ones = {1.0f, 1.0f};
    for (int64_t k = 0; k < 2; ++k) {
      const RowGrad g{{id}, ones, {k}};
      const std::vector<Gradient> dense = {{"w", DType::kFloat32, {2}, k, ones.data()}};
      const StatusOr<PushOutcome> pushed = mode == TrainingMode::kAsync
                                               ? store.Push(dense, false, {g.View()})
                                               : store.SyncPush(dense, 0, k, 0, {g.View()});
      ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    }
    EXPECT_FLOAT_EQ(row(), before - 1.5f) << (mode == TrainingMode::kAsync ? "async" : "sync");
  }
}

TEST_F(SparseStoreTest, SnapshotAndRestoreBringTheRowsBack) {
  Init(TrainingMode::kAsync, 1, StalenessPolicy::kApply, /*table_rows=*/0);  // dynamic
  RowGrad g{{40, -9}, {1, 2, 3, 4}, {0, 0}};
  Rows({40, -9});  // creates the rows
  ASSERT_TRUE(store_.Push({}, false, {g.View()}).ok());
  std::vector<int64_t> versions;
  const std::vector<float> trained = Rows({40, -9}, &versions);
  StatusOr<NamedTensors> snapshot = store_.Snapshot();
  ASSERT_TRUE(snapshot.ok());
  RowGrad more{{40}, {5, 5}, {1}};
  ASSERT_TRUE(store_.Push({}, false, {more.View()}).ok());
  ASSERT_TRUE(store_.Restore(*snapshot).ok());
  std::vector<int64_t> restored_versions;
  EXPECT_EQ(Rows({40, -9}, &restored_versions), trained);
  EXPECT_EQ(restored_versions, versions);
  // A part without the table's rows is refused.
  NamedTensors missing;
  for (auto& [name, t] : *snapshot) {
    if (name != "t@rows") missing.emplace_back(name, t);
  }
  const Status refused = store_.Restore(missing);
  EXPECT_EQ(refused.code(), Code::kDataLoss);
  EXPECT_NE(refused.message().find("t@rows"), std::string::npos);
}

// --ps_replicas: what a primary ships carries every table's rows, their
// versions and their optimizer state (Adagrad's accumulators), so a backup
// promoted after it trains on exactly as the primary would have; for a
// fixed and for a dynamic table.
TEST_F(SparseStoreTest, AReplicationShipmentCarriesTheRowsAndTheirOptimizerState) {
  for (const int64_t table_rows : {int64_t{10}, int64_t{0}}) {
    SCOPED_TRACE(table_rows == 0 ? "dynamic" : "fixed");
    VariableStore primary, backup, reference;
    for (VariableStore* s : {&primary, &backup, &reference}) {
      InitStore(s, TrainingMode::kAsync, 1, StalenessPolicy::kApply, table_rows, "adagrad");
    }
    const RowGrad g{{2, 7}, {1, 2, 3, 4}, {0, 0}};
    for (VariableStore* s : {&primary, &reference}) {
      RowsOf(*s, {2, 7});  // creates a dynamic table's rows
      ASSERT_TRUE(s->Push({}, false, {g.View()}).ok());
    }
    StatusOr<ShardState> shipped = primary.ReplicationSnapshot();
    ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
    {
      // A backup takes a shipment every round: not a line of log each.
      LogLines logged;
      ASSERT_TRUE(backup.Restore(shipped->tensors).ok());
      EXPECT_EQ(logged.count(), 0) << logged.last();
    }
    std::vector<int64_t> primary_versions, backup_versions;
    EXPECT_EQ(RowsOf(backup, {2, 7}, &backup_versions), RowsOf(primary, {2, 7}, &primary_versions));
    EXPECT_EQ(backup_versions, primary_versions);
    // Promoted: the next push uses the accumulators the shipment carried.
    const RowGrad next{{7}, {-1, 0.5f}, {1}};
    ASSERT_TRUE(backup.Push({}, false, {next.View()}).ok());
    ASSERT_TRUE(reference.Push({}, false, {next.View()}).ok());
    EXPECT_EQ(RowsOf(backup, {2, 7}), RowsOf(reference, {2, 7}));
  }
}

}  // namespace
}  // namespace pst
