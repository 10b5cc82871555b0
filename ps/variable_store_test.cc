#include "ps/variable_store.h"

#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <thread>

#include "common/bfloat16.h"

namespace pst {
namespace {

Tensor Filled(Shape shape, float value) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = value;
  return t;
}

// `values` narrowed to bfloat16, as a --wire_dtype=bfloat16 client sends them.
Tensor Narrowed(const Tensor& values) {
  Tensor t(DType::kBFloat16, values.shape());
  FloatToBFloat16(values.f32(), t.bf16(), values.num_elements());
  return t;
}

std::vector<float> Values(const Tensor& t) { return {t.f32(), t.f32() + t.num_elements()}; }

Gradient View(const std::string& name, const Tensor& t, int64_t version) {
  return Gradient{name, t.dtype(), t.shape(), version, t.data()};
}

class VariableStoreTest : public ::testing::Test {
 protected:
  void Init(StalenessPolicy policy = StalenessPolicy::kApply, int64_t max_staleness = 0) {
    ShardConfig config;
    config.optimizer.name = "sgd";
    config.optimizer.learning_rate = 1.0f;
    config.staleness_policy = policy;
    config.max_staleness = max_staleness;
    config.global_step_variable = "global_step";
    std::vector<std::pair<std::string, Tensor>> values;
    values.emplace_back("global_step", Tensor(DType::kInt64, {}));
    values.emplace_back("w", Filled({2, 2}, 1.0f));
    ASSERT_TRUE(store_.Initialize(config, std::move(values)).ok());
  }
  VariableStore store_;
};

TEST_F(VariableStoreTest, PullBeforeInitFails) {
  std::vector<VariableValue> out;
  EXPECT_EQ(store_.Pull({"w"}, &out).code(), Code::kFailedPrecondition);
}

TEST_F(VariableStoreTest, PushAppliesAndBumpsVersionAndGlobalStep) {
  Init();
  Tensor g = Filled({2, 2}, 0.25f);
  auto outcome = store_.Push({View("w", g, 0)}, true);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->applied, 1u);
  EXPECT_EQ(outcome->global_step, 1);
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w", "global_step"}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].tensor.f32()[3], 0.75f);
  EXPECT_EQ(out[0].version, 1);
  EXPECT_EQ(out[1].tensor.i64()[0], 1);
}

TEST_F(VariableStoreTest, BadGradientChangesNothing) {
  Init();
  Tensor good = Filled({2, 2}, 1.0f);
  Tensor wrong_shape = Filled({4}, 1.0f);
  auto outcome = store_.Push({View("w", good, 0), View("w", wrong_shape, 0)}, true);
  EXPECT_EQ(outcome.status().code(), Code::kInvalidArgument);
  EXPECT_NE(outcome.status().message().find("gradient for 'w' has shape [4]"), std::string::npos)
      << outcome.status().message();
  const Status unknown = store_.Push({View("nope", good, 0)}, false).status();
  EXPECT_EQ(unknown.code(), Code::kNotFound);
  EXPECT_NE(unknown.message().find("no variable 'nope'"), std::string::npos) << unknown.message();
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w", "global_step"}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].tensor.f32()[0], 1.0f);
  EXPECT_EQ(out[1].tensor.i64()[0], 0);
  EXPECT_EQ(store_.Pull({"w", "zzz"}, &out).code(), Code::kNotFound);
}

TEST_F(VariableStoreTest, PulledValueIsNotChangedByLaterPush) {
  Init();
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w"}, &out).ok());
  Tensor g = Filled({2, 2}, 1.0f);
  ASSERT_TRUE(store_.Push({View("w", g, 0)}, false).ok());
  EXPECT_FLOAT_EQ(out[0].tensor.f32()[0], 1.0f);  // copy-on-write kept it
  std::vector<VariableValue> again;
  ASSERT_TRUE(store_.Pull({"w"}, &again).ok());
  EXPECT_FLOAT_EQ(again[0].tensor.f32()[0], 0.0f);
}

TEST_F(VariableStoreTest, DropPolicyDropsTooStale) {
  Init(StalenessPolicy::kDrop, 1);
  Tensor g = Filled({2, 2}, 0.1f);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(store_.Push({View("w", g, i)}, true).ok());
  auto stale = store_.Push({View("w", g, 0)}, true);  // staleness 2 > 1
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(stale->dropped, 1u);
  EXPECT_EQ(stale->max_staleness, 2);
  EXPECT_EQ(stale->global_step, 2);                // not incremented
  auto ok = store_.Push({View("w", g, 1)}, true);  // staleness 1
  EXPECT_EQ(ok->applied, 1u);
  EXPECT_EQ(store_.Stats().gradients_dropped, 1u);
}

TEST_F(VariableStoreTest, ScalePolicyScalesLearningRate) {
  Init(StalenessPolicy::kScale);
  Tensor g = Filled({2, 2}, 0.5f);
  ASSERT_TRUE(store_.Push({View("w", g, 0)}, false).ok());  // w = 0.5
  auto scaled = store_.Push({View("w", g, 0)}, false);      // staleness 1: lr/2
  EXPECT_EQ(scaled->scaled, 1u);
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w"}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].tensor.f32()[0], 0.25f);
}

TEST_F(VariableStoreTest, ConcurrentPushesLoseNothing) {
  Init();
  constexpr int kThreads = 4, kPushes = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this] {
      Tensor g = Filled({2, 2}, -1.0f);
      for (int i = 0; i < kPushes; ++i) ASSERT_TRUE(store_.Push({View("w", g, 0)}, true).ok());
    });
  }
  for (auto& t : threads) t.join();
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w", "global_step"}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].tensor.f32()[0], 1.0f + kThreads * kPushes);
  EXPECT_EQ(out[1].tensor.i64()[0], kThreads * kPushes);
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

TEST_F(VariableStoreTest, BFloat16GradientIsWidenedAndApplied) {
  Init();
  // 0.1 is not a bfloat16: the apply sees its rounded value, exactly.
  const Tensor g = Narrowed(Filled({2, 2}, 0.1f));
  ASSERT_TRUE(store_.Push({View("w", g, 0)}, true).ok());
  ASSERT_TRUE(store_.Push({View("w", g, 1)}, true).ok());  // reuses the widening buffer
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w"}, &out).ok());
  const float step = BFloat16ToFloat(FloatToBFloat16(0.1f));
  EXPECT_NE(step, 0.1f);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].tensor.f32()[i], (1.0f - step) - step);
  EXPECT_EQ(out[0].tensor.dtype(), DType::kFloat32);  // the store keeps float32
}

TEST_F(VariableStoreTest, NonFiniteBFloat16GradientIsRefused) {
  Init();
  for (uint16_t bad : {uint16_t{0x7fc0}, uint16_t{0x7f80}, uint16_t{0xff80}}) {
    Tensor g = Narrowed(Filled({2, 2}, 0.5f));
    g.bf16()[3] = bad;
    auto outcome = store_.Push({View("w", g, 0)}, true);
    EXPECT_EQ(outcome.status().code(), Code::kInvalidArgument);
    EXPECT_NE(outcome.status().message().find("at element 3"), std::string::npos);
  }
  std::vector<VariableValue> out;
  ASSERT_TRUE(store_.Pull({"w"}, &out).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].tensor.f32()[i], 1.0f);
}

TEST_F(VariableStoreTest, Int64GradientIsRefusedAsBFloat16) {
  Init();
  Tensor g(DType::kBFloat16, {});
  EXPECT_EQ(store_.Push({View("global_step", g, 0)}, false).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

class SyncStoreTest : public ::testing::Test {
 protected:
  void Init(int replicas) {
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.mode = TrainingMode::kSync;
    config.replicas_to_aggregate = replicas;
    std::vector<std::pair<std::string, Tensor>> values;
    values.emplace_back("w", Filled({2}, 0.0f));
    ASSERT_TRUE(store_.Initialize(config, std::move(values)).ok());
  }
  StatusOr<PushOutcome> PushValue(int worker, int64_t step, float g, int replicas = 0) {
    grads_.push_back(Filled({2}, g));
    return store_.SyncPush({View("w", grads_.back(), 0)}, worker, step, replicas);
  }
  float Value() {
    std::vector<VariableValue> out;
    EXPECT_TRUE(store_.Pull({"w"}, &out).ok());
    return out[0].tensor.f32()[0];
  }
  std::deque<Tensor> grads_;
  VariableStore store_;
};

// --replicas_to_aggregate=auto: the shard is configured for all 3 workers;
// each push says how many its step aggregates.
TEST_F(SyncStoreTest, TheStepsNComesWithItsPushes) {
  Init(3);
  ASSERT_TRUE(PushValue(0, 0, 1.0f, 2).ok());
  auto second = PushValue(1, 0, 3.0f, 2);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->completed_step, 0);  // 2 of 3 closed the step
  EXPECT_EQ(Value(), -2.0f);             // the mean of the two
  auto spare = PushValue(2, 0, 100.0f, 2);
  ASSERT_TRUE(spare.ok());
  EXPECT_TRUE(spare->stale);
  // Step 1 aggregates all three.
  ASSERT_TRUE(PushValue(0, 1, 3.0f, 3).ok());
  ASSERT_TRUE(PushValue(1, 1, 3.0f, 3).ok());
  EXPECT_EQ(Value(), -2.0f);
  auto third = PushValue(2, 1, 6.0f, 3);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->completed_step, 1);
  EXPECT_EQ(Value(), -6.0f);
}

TEST_F(SyncStoreTest, APushAskingForMoreThanTheConfiguredNIsRefused) {
  Init(2);
  for (int replicas : {3, -1}) {
    auto refused = PushValue(0, 0, 1.0f, replicas);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("aggregates 1..2"), std::string::npos)
        << refused.status().message();
  }
  // Refused pushes are not this worker's push for the step.
  ASSERT_TRUE(PushValue(0, 0, 1.0f).ok());
  EXPECT_EQ(PushValue(1, 0, 3.0f)->completed_step, 0);
}

TEST_F(SyncStoreTest, BFloat16AndFloat32PushesAverage) {
  Init(2);
  grads_.push_back(Narrowed(Filled({2}, 1.0f)));
  ASSERT_TRUE(store_.SyncPush({View("w", grads_.back(), 0)}, 0, 0).ok());
  auto second = PushValue(1, 0, 3.0f);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->completed_step, 0);
  EXPECT_EQ(Value(), -2.0f);
}

TEST_F(SyncStoreTest, AppliesTheAverageOfNPushes) {
  Init(2);
  auto first = PushValue(0, 0, 1.0f);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->completed_step, -1);
  EXPECT_EQ(Value(), 0.0f);  // nothing applied before N pushes
  auto second = PushValue(1, 0, 3.0f);
  EXPECT_EQ(second->completed_step, 0);
  EXPECT_EQ(second->shard_step, 1);
  EXPECT_EQ(Value(), -2.0f);  // lr 1 * mean(1, 3)
}

TEST_F(SyncStoreTest, DuplicatePushDoesNotCount) {
  Init(2);
  ASSERT_TRUE(PushValue(0, 0, 1.0f).ok());
  auto again = PushValue(0, 0, 100.0f);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->completed_step, -1);
  auto other = PushValue(1, 0, 3.0f);
  EXPECT_EQ(other->completed_step, 0);
  EXPECT_EQ(Value(), -2.0f);  // the duplicate's 100 was never added
  EXPECT_EQ(store_.Stats().duplicate_pushes, 1u);
}

TEST_F(SyncStoreTest, StalePushIsDroppedAndSaysSo) {
  Init(1);
  ASSERT_EQ(PushValue(0, 0, 1.0f)->completed_step, 0);
  auto late = PushValue(1, 0, 50.0f);
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(late->stale);
  EXPECT_EQ(late->shard_step, 1);
  EXPECT_EQ(Value(), -1.0f);
  const StoreStats stats = store_.Stats();
  EXPECT_EQ(stats.stale_pushes, 1u);
  EXPECT_EQ(stats.aggregated_per_worker, (std::vector<uint64_t>{1}));
}

TEST_F(SyncStoreTest, PushForALaterStepIsStaleAfterARollback) {
  Init(1);
  auto pushed = PushValue(0, 5, 1.0f);  // e.g. computed before a restore to step 0
  ASSERT_TRUE(pushed.ok());
  EXPECT_TRUE(pushed->stale);
  EXPECT_EQ(Value(), 0.0f);
}

TEST_F(SyncStoreTest, PushMustCoverEveryVariable) {
  Init(1);
  EXPECT_EQ(store_.SyncPush({}, 0, 0).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

TEST(VariableStoreCheckpointTest, SnapshotThenRestoreBringsBackValuesSlotsAndVersions) {
  ShardConfig config;
  config.optimizer.name = "adam";
  config.optimizer.learning_rate = 0.1f;
  auto make = [&](VariableStore* store) {
    std::vector<std::pair<std::string, Tensor>> values;
    values.emplace_back("w", Filled({3}, 1.0f));
    ASSERT_TRUE(store->Initialize(config, std::move(values)).ok());
  };
  VariableStore trained, restored;
  make(&trained);
  make(&restored);
  Tensor g = Filled({3}, 0.5f);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(trained.Push({View("w", g, i)}, false).ok());
  auto snapshot = trained.Snapshot();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_TRUE(restored.Restore(*snapshot).ok());
  // One more identical update on both: equal only if Adam's slots and step
  // count came back too.
  ASSERT_TRUE(trained.Push({View("w", g, 3)}, false).ok());
  ASSERT_TRUE(restored.Push({View("w", g, 3)}, false).ok());
  std::vector<VariableValue> a, b;
  ASSERT_TRUE(trained.Pull({"w"}, &a).ok());
  ASSERT_TRUE(restored.Pull({"w"}, &b).ok());
  EXPECT_EQ(a[0].version, 4);
  EXPECT_EQ(b[0].version, 4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a[0].tensor.f32()[i], b[0].tensor.f32()[i]);
}

// A restore writes into the store's own buffer, but never under a value a
// pull handed out (a reply still being sent, or a worker's params).
TEST(VariableStoreCheckpointTest, ARestoreLeavesAValuePulledBeforeItAlone) {
  ShardConfig config;
  VariableStore store;
  std::vector<std::pair<std::string, Tensor>> values;
  values.emplace_back("w", Filled({3}, 1.0f));
  ASSERT_TRUE(store.Initialize(config, std::move(values)).ok());
  auto snapshot = store.Snapshot();
  ASSERT_TRUE(snapshot.ok());
  Tensor g = Filled({3}, 10.0f);
  ASSERT_TRUE(store.Push({View("w", g, 0)}, false).ok());
  std::vector<VariableValue> held;
  ASSERT_TRUE(store.Pull({"w"}, &held).ok());
  const float trained = held[0].tensor.f32()[0];
  ASSERT_NE(trained, 1.0f);
  ASSERT_TRUE(store.Restore(*snapshot).ok());
  EXPECT_EQ(held[0].tensor.f32()[0], trained);
  std::vector<VariableValue> now;
  ASSERT_TRUE(store.Pull({"w"}, &now).ok());
  EXPECT_EQ(now[0].tensor.f32()[0], 1.0f);
  // Nothing holds it now: the next restore writes in place, correctly.
  held.clear();
  now.clear();
  ASSERT_TRUE(store.Push({View("w", g, 0)}, false).ok());
  ASSERT_TRUE(store.Restore(*snapshot).ok());
  ASSERT_TRUE(store.Pull({"w"}, &now).ok());
  EXPECT_EQ(now[0].tensor.f32()[0], 1.0f);
}

TEST(VariableStoreCheckpointTest, PartMissingAVariableChangesNothing) {
  ShardConfig config;
  VariableStore store;
  std::vector<std::pair<std::string, Tensor>> values;
  values.emplace_back("w", Filled({3}, 1.0f));
  values.emplace_back("v", Filled({2}, 2.0f));
  ASSERT_TRUE(store.Initialize(config, std::move(values)).ok());
  auto snapshot = store.Snapshot();
  ASSERT_TRUE(snapshot.ok());
  NamedTensors partial;
  for (auto& [name, t] : *snapshot) {
    if (name == "w") {
      partial.emplace_back(name, Filled({3}, 9.0f));
    } else if (name.rfind("v", 0) != 0) {
      partial.emplace_back(name, t);
    }
  }
  Status s = store.Restore(partial);
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find("'v'"), std::string::npos) << s.ToString();
  std::vector<VariableValue> out;
  ASSERT_TRUE(store.Pull({"w"}, &out).ok());
  EXPECT_EQ(out[0].tensor.f32()[0], 1.0f);
}

// A slice of a partitioned variable has its own name on the ps: a refused
// gradient names it and the element, wherever that lies (in a whole block of
// the check or in the tail after the last one), and changes nothing.
TEST(VariableStoreNonFiniteTest, RefusalNamesTheSliceAndTheElement) {
  ShardConfig config;
  config.optimizer.name = "sgd";
  config.optimizer.learning_rate = 1.0f;
  VariableStore store;
  std::vector<std::pair<std::string, Tensor>> values;
  values.emplace_back("emb/part_1", Filled({100}, 1.0f));
  ASSERT_TRUE(store.Initialize(config, std::move(values)).ok());
  for (int bad : {0, 63, 64, 70, 99}) {
    Tensor g = Filled({100}, 0.5f);
    g.f32()[bad] =
        bad % 2 ? std::numeric_limits<float>::quiet_NaN() : -std::numeric_limits<float>::infinity();
    auto outcome = store.Push({View("emb/part_1", g, 0)}, false);
    EXPECT_EQ(outcome.status().code(), Code::kInvalidArgument);
    const std::string& message = outcome.status().message();
    EXPECT_NE(message.find("'emb/part_1'"), std::string::npos) << message;
    EXPECT_NE(message.find("element " + std::to_string(bad) + ")"), std::string::npos) << message;
  }
  std::vector<VariableValue> out;
  ASSERT_TRUE(store.Pull({"emb/part_1"}, &out).ok());
  EXPECT_EQ(out[0].version, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(out[0].tensor.f32()[i], 1.0f);
  EXPECT_EQ(store.Stats().updates_applied, 0u);
}

}  // namespace
}  // namespace pst

// The learning-rate schedule and decoupled weight decay (ShardConfig): SGD
// at base rate 1, gradients of 1, so each update moves a weight by the
// scheduled rate of the global step before it.
namespace pst {
namespace {

class ScheduledStoreTest : public ::testing::Test {
 protected:
  // "w" a [2, 2] weight and "b" a [2] bias, both starting at `initial`.
  Status Init(ShardConfig config, float initial = 0.0f) {
    config.optimizer.name = "sgd";
    config.global_step_variable = "global_step";
    config.replicas_to_aggregate = 1;
    std::vector<std::pair<std::string, Tensor>> values;
    values.emplace_back("global_step", Tensor(DType::kInt64, {}));
    values.emplace_back("w", Filled({2, 2}, initial));
    values.emplace_back("b", Filled({2}, initial));
    return store_.Initialize(config, std::move(values));
  }
  // One update of every variable by gradients of 1, at the next global step.
  void Step(TrainingMode mode) {
    const std::vector<Gradient> grads = {View(w_, ones_w_, version_), View(b_, ones_b_, version_)};
    const auto outcome = mode == TrainingMode::kSync ? store_.SyncPush(grads, 0, version_)
                                                     : store_.Push(grads, true);
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    ++version_;
  }
  float Value(const std::string& name) {
    std::vector<VariableValue> out;
    EXPECT_TRUE(store_.Pull({name}, &out).ok());
    return out[0].tensor.f32()[0];
  }
  static ShardConfig StepDecay() {
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.lr_schedule = "step";
    config.lr_decay_steps = 2;
    config.lr_decay_rate = 0.5f;
    return config;
  }
  // Rate 0.5 halving every step, weight decay 0.1.
  static ShardConfig HalvingWithWeightDecay() {
    ShardConfig config;
    config.optimizer.learning_rate = 0.5f;
    config.lr_schedule = "step";
    config.lr_decay_steps = 1;
    config.lr_decay_rate = 0.5f;
    config.weight_decay = 0.1f;
    return config;
  }
  // Rate 1, halved by each of the chief's lowerings.
  static ShardConfig Plateau() {
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.lr_schedule = "plateau";
    config.lr_decay_rate = 0.5f;
    return config;
  }
  // Gradients borrow their names: these outlive them.
  const std::string w_ = "w", b_ = "b";
  const Tensor ones_w_ = Filled({2, 2}, 1.0f);
  const Tensor ones_b_ = Filled({2}, 1.0f);
  int64_t version_ = 0;
  VariableStore store_;
};

// Steps 0, 1 at rate 1; steps 2, 3 at 0.5.
TEST_F(ScheduledStoreTest, StepDecayMovesByTheRateOfEachGlobalStepAsync) {
  ASSERT_TRUE(Init(StepDecay()).ok());
  for (float expected : {-1.0f, -2.0f, -2.5f, -3.0f}) {
    Step(TrainingMode::kAsync);
    EXPECT_FLOAT_EQ(Value("w"), expected) << "after global step " << version_;
    EXPECT_FLOAT_EQ(Value("b"), expected);
  }
}

TEST_F(ScheduledStoreTest, StepDecayMovesByTheRateOfEachGlobalStepSync) {
  ShardConfig config = StepDecay();
  config.mode = TrainingMode::kSync;
  ASSERT_TRUE(Init(config).ok());
  for (float expected : {-1.0f, -2.0f, -2.5f, -3.0f}) {
    Step(TrainingMode::kSync);
    EXPECT_FLOAT_EQ(Value("w"), expected) << "after sync step " << version_;
  }
}

// A restored shard goes on from the checkpoint's step: its third update
// runs at 0.5, not at the rate of a fresh step 0.
TEST_F(ScheduledStoreTest, RestoredShardContinuesTheSchedule) {
  ASSERT_TRUE(Init(StepDecay()).ok());
  Step(TrainingMode::kAsync);
  Step(TrainingMode::kAsync);
  auto snapshot = store_.Snapshot();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_TRUE(Init(StepDecay()).ok());
  ASSERT_TRUE(store_.Restore(*snapshot).ok());
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), -2.5f);
}

// Warm-up over 4 steps: rates 1/4, 2/4, 3/4, then the full rate.
TEST_F(ScheduledStoreTest, WarmUpRaisesTheRateLinearly) {
  ShardConfig config;
  config.optimizer.learning_rate = 1.0f;
  config.lr_warmup_steps = 4;
  ASSERT_TRUE(Init(config).ok());
  for (float expected : {-0.25f, -0.75f, -1.5f, -2.5f, -3.5f}) {
    Step(TrainingMode::kAsync);
    EXPECT_FLOAT_EQ(Value("w"), expected) << "after global step " << version_;
  }
}

// lr 0.5, decay 0.1, w = b = 2: the weight decays before the gradient's
// update, w = 2 * (1 - 0.5 * 0.1) - 0.5 = 1.4 (after it would give 1.425);
// the bias only takes the gradient: 2 - 0.5 = 1.5. The decay follows the
// schedule: at step 1 the rate is 0.25, w = 1.4 * (1 - 0.025) - 0.25.
TEST_F(ScheduledStoreTest, WeightDecayShrinksWeightsButNotBiasesBeforeTheUpdate) {
  ASSERT_TRUE(Init(HalvingWithWeightDecay(), 2.0f).ok());
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), 1.4f);
  EXPECT_FLOAT_EQ(Value("b"), 1.5f);
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), 1.4f * (1 - 0.025f) - 0.25f);
  EXPECT_FLOAT_EQ(Value("b"), 1.25f);
}

// Batch norm's moving statistics: "b" is a moving average, so its push is a
// delta added as it is, at no rate and without weight decay, while "w"
// takes the scheduled, decayed update of WeightDecayShrinksWeights... above.
TEST_F(ScheduledStoreTest, AMovingAverageAddsItsDeltaOutsideTheOptimizer) {
  ShardConfig config = HalvingWithWeightDecay();
  config.moving_averages = {"b"};
  ASSERT_TRUE(Init(config, 2.0f).ok());
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), 1.4f);
  EXPECT_FLOAT_EQ(Value("b"), 3.0f);
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("b"), 4.0f);
}

// A sync step adds the mean of its workers' deltas, once.
TEST(MovingAverageStoreTest, ASyncStepAddsTheMeanDelta) {
  ShardConfig config;
  config.optimizer.name = "momentum";
  config.optimizer.learning_rate = 0.5f;
  config.mode = TrainingMode::kSync;
  config.replicas_to_aggregate = 2;
  config.moving_averages = {"bn/moving_mean"};
  std::vector<std::pair<std::string, Tensor>> values;
  values.emplace_back("bn/moving_mean", Filled({2}, 1.0f));
  VariableStore store;
  ASSERT_TRUE(store.Initialize(config, std::move(values)).ok());
  const std::string name = "bn/moving_mean";
  const Tensor one = Filled({2}, 1.0f), three = Filled({2}, 3.0f);
  ASSERT_TRUE(store.SyncPush({View(name, one, 0)}, 0, 0).ok());
  ASSERT_EQ(store.SyncPush({View(name, three, 0)}, 1, 0)->completed_step, 0);
  std::vector<VariableValue> out;
  ASSERT_TRUE(store.Pull({name}, &out).ok());
  EXPECT_EQ(Values(out[0].tensor), (std::vector<float>{3.0f, 3.0f}));  // 1 + mean(1, 3)
}

TEST(MovingAverageStoreTest, AMovingAverageThatIsNoFloatVariableOfTheShardIsRefused) {
  for (const char* name : {"nope", "global_step"}) {
    ShardConfig config;
    config.moving_averages = {name};
    std::vector<std::pair<std::string, Tensor>> values;
    values.emplace_back("global_step", Tensor(DType::kInt64, {}));
    VariableStore store;
    const Status refused = store.Initialize(config, std::move(values));
    EXPECT_EQ(refused.code(), Code::kInvalidArgument);
    EXPECT_NE(refused.message().find(std::string("moving average '") + name + "'"),
              std::string::npos)
        << refused.ToString();
  }
}

// Updates after SetLrLowerings(k) run at 0.5^k, whatever the step: 1, then
// 0.5, then 0.125. A fresh Initialize starts again at k = 0.
TEST_F(ScheduledStoreTest, PlateauRunsAtTheRateOfTheChiefsLowerings) {
  ASSERT_TRUE(Init(Plateau()).ok());
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), -1.0f);
  ASSERT_TRUE(store_.SetLrLowerings(1).ok());
  EXPECT_EQ(store_.Stats().lr_lowerings, 1);
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), -1.5f);
  ASSERT_TRUE(store_.SetLrLowerings(3).ok());
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), -1.625f);
  EXPECT_FLOAT_EQ(Value("b"), -1.625f);

  version_ = 0;
  ASSERT_TRUE(Init(Plateau()).ok());
  EXPECT_EQ(store_.Stats().lr_lowerings, 0);
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), -1.0f);
}

TEST_F(ScheduledStoreTest, PlateauSyncStepRunsAtTheChiefsLowerings) {
  ShardConfig config = Plateau();
  config.mode = TrainingMode::kSync;
  ASSERT_TRUE(Init(config).ok());
  ASSERT_TRUE(store_.SetLrLowerings(2).ok());
  Step(TrainingMode::kSync);
  EXPECT_FLOAT_EQ(Value("w"), -0.25f);
}

// Refused lowerings change nothing: a negative k, one before the variables
// are there, one for a schedule that has none.
TEST_F(ScheduledStoreTest, BadLoweringsAreRefused) {
  EXPECT_EQ(store_.SetLrLowerings(1).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(Init(Plateau()).ok());
  EXPECT_EQ(store_.SetLrLowerings(-1).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_.Stats().lr_lowerings, 0);
  ASSERT_TRUE(Init(StepDecay()).ok());
  const Status refused = store_.SetLrLowerings(1);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("this shard's schedule is step"), std::string::npos)
      << refused.ToString();
  Step(TrainingMode::kAsync);
  EXPECT_FLOAT_EQ(Value("w"), -1.0f);
}

TEST_F(ScheduledStoreTest, BadScheduleOrWeightDecayIsRefusedAtInit) {
  ShardConfig unknown;
  unknown.lr_schedule = "linear";
  EXPECT_EQ(Init(unknown).code(), Code::kInvalidArgument);
  ShardConfig no_steps = StepDecay();
  no_steps.lr_decay_steps = 0;
  const Status refused = Init(no_steps);
  EXPECT_EQ(refused.code(), Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("decay_steps"), std::string::npos) << refused.ToString();
  ShardConfig negative_decay;
  negative_decay.weight_decay = -0.1f;
  EXPECT_EQ(Init(negative_decay).code(), Code::kInvalidArgument);
  EXPECT_FALSE(store_.initialized());
}

}  // namespace
}  // namespace pst
