// VariableStore under replication: push ids, and the state a primary ships
// to its backups (ps/replication/).
#include <gtest/gtest.h>

#include "ps/variable_store.h"

namespace pst {
namespace {

Tensor Filled(Shape shape, float value) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = value;
  return t;
}

Gradient View(const std::string& name, const Tensor& t, int64_t version) {
  return Gradient{name, t.dtype(), t.shape(), version, t.data()};
}

void Init(VariableStore* store, const std::string& optimizer = "momentum") {
  ShardConfig config;
  config.optimizer.name = optimizer;
  config.optimizer.learning_rate = 0.5f;
  config.optimizer.momentum = 0.9f;
  config.global_step_variable = "global_step";
  std::vector<std::pair<std::string, Tensor>> values;
  values.emplace_back("global_step", Tensor(DType::kInt64, {}));
  values.emplace_back("w", Filled({3}, 1.0f));
  ASSERT_TRUE(store->Initialize(config, std::move(values)).ok());
}

std::vector<float> W(VariableStore& store) {
  std::vector<VariableValue> out;
  EXPECT_TRUE(store.Pull({"w"}, &out).ok());
  return {out[0].tensor.f32(), out[0].tensor.f32() + 3};
}

int64_t GlobalStep(VariableStore& store) {
  std::vector<VariableValue> out;
  EXPECT_TRUE(store.Pull({"global_step"}, &out).ok());
  return out[0].tensor.i64()[0];
}

TEST(VariableStoreReplicationTest, APushRetriedWithItsIdIsNotAppliedTwice) {
  VariableStore store;
  Init(&store);
  const Tensor g = Filled({3}, 1.0f);
  const PushId id{/*worker=*/1, /*incarnation=*/42, /*sequence=*/1};
  StatusOr<PushOutcome> first = store.Push({View("w", g, 0)}, true, {}, id);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->duplicate);
  EXPECT_EQ(first->pushes_applied, 1u);
  const std::vector<float> after_one = W(store);
  StatusOr<PushOutcome> retry = store.Push({View("w", g, 0)}, true, {}, id);
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->duplicate);
  EXPECT_EQ(retry->applied, 0u);
  EXPECT_EQ(retry->global_step, 1);  // the step the worker's loop reads
  EXPECT_EQ(W(store), after_one);
  EXPECT_EQ(GlobalStep(store), 1);
  // The next push of that worker, and any push without an id, apply.
  EXPECT_FALSE(store.Push({View("w", g, 1)}, true, {}, {1, 42, 2})->duplicate);
  EXPECT_FALSE(store.Push({View("w", g, 2)}, true)->duplicate);
  EXPECT_FALSE(store.Push({View("w", g, 3)}, true)->duplicate);
  EXPECT_EQ(GlobalStep(store), 4);
}

TEST(VariableStoreReplicationTest, ARefusedPushIsNotHeld) {
  VariableStore store;
  Init(&store);
  const Tensor bad = Filled({4}, 1.0f);
  EXPECT_FALSE(store.Push({View("w", bad, 0)}, true, {}, {0, 7, 1}).ok());
  const Tensor good = Filled({3}, 1.0f);
  StatusOr<PushOutcome> again = store.Push({View("w", good, 0)}, true, {}, {0, 7, 1});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->duplicate);
}

// A backup restored from the primary's shipment holds the same values,
// slots and ledger: promoted, it goes on exactly as the primary would have,
// and acknowledges the retry of a push the primary applied.
TEST(VariableStoreReplicationTest, ABackupFromAShipmentContinuesAsThePrimary) {
  VariableStore primary, backup, reference;
  Init(&primary);
  Init(&backup);
  Init(&reference);
  const Tensor g1 = Filled({3}, 1.0f), g2 = Filled({3}, -0.5f);
  for (VariableStore* s : {&primary, &reference}) {
    ASSERT_TRUE(s->Push({View("w", g1, 0)}, true, {}, {0, 9, 1}).ok());
  }
  StatusOr<ShardState> shipped = primary.ReplicationSnapshot();
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(shipped->watermark.applied, 1u);
  ASSERT_TRUE(backup.Restore(shipped->tensors).ok());
  EXPECT_EQ(W(backup), W(primary));
  // The worker's retry of push 1 reaches the promoted backup: held.
  EXPECT_TRUE(backup.Push({View("w", g1, 0)}, true, {}, {0, 9, 1})->duplicate);
  // Push 2 applies with the momentum slot the shipment carried.
  ASSERT_TRUE(backup.Push({View("w", g2, 1)}, true, {}, {0, 9, 2}).ok());
  ASSERT_TRUE(reference.Push({View("w", g2, 1)}, true, {}, {0, 9, 2}).ok());
  EXPECT_EQ(W(backup), W(reference));
  EXPECT_EQ(GlobalStep(backup), 2);
}

TEST(VariableStoreReplicationTest, ACheckpointRestoreForgetsThePushesAfterIt) {
  VariableStore store;
  Init(&store, "sgd");
  StatusOr<NamedTensors> checkpoint = store.Snapshot();
  ASSERT_TRUE(checkpoint.ok());
  for (const auto& [name, t] : *checkpoint) EXPECT_NE(name, "@push_ledger");
  const Tensor g = Filled({3}, 1.0f);
  ASSERT_TRUE(store.Push({View("w", g, 0)}, true, {}, {0, 9, 1}).ok());
  ASSERT_TRUE(store.Restore(*checkpoint).ok());
  // Rolled back before push 1: its retry must apply.
  EXPECT_FALSE(store.Push({View("w", g, 0)}, true, {}, {0, 9, 1})->duplicate);
}

TEST(VariableStoreReplicationTest, AShipmentWithAMalformedLedgerChangesNothing) {
  VariableStore primary, backup;
  Init(&primary, "sgd");
  Init(&backup, "sgd");
  ASSERT_TRUE(primary.Push({View("w", Filled({3}, 1.0f), 0)}, true).ok());
  StatusOr<ShardState> shipped = primary.ReplicationSnapshot();
  ASSERT_TRUE(shipped.ok());
  for (auto& [name, t] : shipped->tensors) {
    if (name == "@push_ledger") t = Tensor(DType::kFloat32, {1});
  }
  EXPECT_EQ(backup.Restore(shipped->tensors).code(), Code::kDataLoss);
  EXPECT_EQ(W(backup), (std::vector<float>{1, 1, 1}));
}

// The plateau's k travels with the state: a promoted backup goes on at the
// primary's rate, whatever k the chief last sent it.
TEST(VariableStoreReplicationTest, AShipmentCarriesTheLearningRatesLowerings) {
  VariableStore primary, backup;
  for (VariableStore* s : {&primary, &backup}) {
    ShardConfig config;
    config.optimizer.name = "sgd";
    config.optimizer.learning_rate = 1.0f;
    config.lr_schedule = "plateau";
    config.lr_decay_rate = 0.5f;
    std::vector<std::pair<std::string, Tensor>> values;
    values.emplace_back("w", Filled({3}, 1.0f));
    ASSERT_TRUE(s->Initialize(config, std::move(values)).ok());
  }
  ASSERT_TRUE(primary.SetLrLowerings(2).ok());
  StatusOr<ShardState> shipped = primary.ReplicationSnapshot();
  ASSERT_TRUE(shipped.ok());
  ASSERT_TRUE(backup.Restore(shipped->tensors).ok());
  EXPECT_EQ(backup.Stats().lr_lowerings, 2);
  ASSERT_TRUE(backup.Push({View("w", Filled({3}, 1.0f), 0)}, false).ok());
  EXPECT_EQ(W(backup), (std::vector<float>{0.75, 0.75, 0.75}));  // 1 - 1 * 0.5^2
}

}  // namespace
}  // namespace pst
