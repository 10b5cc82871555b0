// VariableStore under --follow: a stream batch applied once, the ledger in
// the checkpoint snapshot with the values it describes.
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

void Init(VariableStore* store) {
  ShardConfig config;
  config.optimizer.name = "sgd";
  config.optimizer.learning_rate = 0.5f;
  config.global_step_variable = "global_step";
  std::vector<std::pair<std::string, Tensor>> values;
  values.emplace_back("global_step", Tensor(DType::kInt64, {}));
  values.emplace_back("w", Filled({2}, 1.0f));
  ASSERT_TRUE(store->Initialize(config, std::move(values)).ok());
}

float W0(VariableStore& store) {
  std::vector<VariableValue> out;
  EXPECT_TRUE(store.Pull({"w"}, &out).ok());
  return out[0].tensor.f32()[0];
}

StreamBatch Batch(int64_t b, bool last = false) { return StreamBatch{99, b, 4, 4, last}; }

TEST(VariableStoreStreamTest, AStreamBatchIsAppliedOnce) {
  VariableStore store;
  Init(&store);
  const Tensor g = Filled({2}, 1.0f);
  StatusOr<PushOutcome> first = store.Push({View("w", g, 0)}, true, {}, {}, Batch(1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->duplicate);
  EXPECT_FLOAT_EQ(W0(store), 0.5f);
  // The same batch again (a worker replaying the file): dropped.
  StatusOr<PushOutcome> again = store.Push({View("w", g, 1)}, true, {}, {}, Batch(1));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_FLOAT_EQ(W0(store), 0.5f);
  EXPECT_EQ(again->global_step, 1);
  EXPECT_EQ(store.StreamProgressOf(99).next_batch, 2);
  EXPECT_EQ(store.StreamProgressOf(99).examples, 4);
}

TEST(VariableStoreStreamTest, ARefusedMarkChangesNothing) {
  VariableStore store;
  Init(&store);
  const Tensor g = Filled({2}, 1.0f);
  ASSERT_TRUE(store.Push({View("w", g, 0)}, true, {}, {}, Batch(1)).ok());
  const StatusOr<PushOutcome> other_size =
      store.Push({View("w", g, 1)}, true, {}, {}, StreamBatch{99, 2, 8, 8, false});
  EXPECT_EQ(other_size.status().code(), Code::kInvalidArgument);
  EXPECT_FLOAT_EQ(W0(store), 0.5f);
  EXPECT_EQ(store.StreamProgressOf(99).next_batch, 2);
}

TEST(VariableStoreStreamTest, ACheckpointHoldsTheLedgerOfItsValues) {
  VariableStore store;
  Init(&store);
  const Tensor g = Filled({2}, 1.0f);
  ASSERT_TRUE(store.Push({View("w", g, 0)}, true, {}, {}, Batch(1)).ok());
  StatusOr<NamedTensors> part = store.Snapshot();
  ASSERT_TRUE(part.ok());
  ASSERT_TRUE(store.Push({View("w", g, 1)}, true, {}, {}, Batch(2, true)).ok());
  EXPECT_TRUE(store.StreamProgressOf(99).complete);
  // Back to the checkpoint: batch 2 is not held there, and applies again.
  ASSERT_TRUE(store.Restore(*part).ok());
  EXPECT_FLOAT_EQ(W0(store), 0.5f);
  EXPECT_EQ(store.StreamProgressOf(99).next_batch, 2);
  EXPECT_FALSE(store.StreamProgressOf(99).complete);
  StatusOr<PushOutcome> replay = store.Push({View("w", g, 1)}, true, {}, {}, Batch(2, true));
  ASSERT_TRUE(replay.ok());
  EXPECT_FALSE(replay->duplicate);
  EXPECT_FLOAT_EQ(W0(store), 0.0f);
  EXPECT_TRUE(store.StreamProgressOf(99).complete);
}

TEST(VariableStoreStreamTest, APartWithoutALedgerRestoresNone) {
  VariableStore store;
  Init(&store);
  StatusOr<NamedTensors> part = store.Snapshot();  // no stream yet: no ledger in it
  ASSERT_TRUE(part.ok());
  for (const auto& [name, t] : *part) EXPECT_NE(name, "@stream_ledger");
  ASSERT_TRUE(store.Push({View("w", Filled({2}, 1.0f), 0)}, true, {}, {}, Batch(1)).ok());
  ASSERT_TRUE(store.Restore(*part).ok());
  EXPECT_EQ(store.StreamProgressOf(99).next_batch, 1);
}

}  // namespace
}  // namespace pst
