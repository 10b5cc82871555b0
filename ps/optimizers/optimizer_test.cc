#include "ps/optimizers/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace pst {
namespace {

// One small variable and three gradients, shared by the hand-computed tests.
const std::vector<float> kVar0 = {1.0f, -2.0f, 0.5f};
const std::vector<std::vector<float>> kGrads = {
    {0.1f, -0.2f, 0.3f}, {0.4f, 0.0f, -0.5f}, {-0.3f, 0.6f, 0.2f}};
constexpr double kTol = 1e-6;

std::unique_ptr<Optimizer> Make(const OptimizerConfig& config) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  EXPECT_TRUE(optimizer.ok()) << optimizer.status().ToString();
  return std::move(optimizer).value();
}

OptimizerConfig Config(const std::string& name) {
  OptimizerConfig config;
  config.name = name;
  config.learning_rate = 0.1f;
  return config;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], kTol) << "element " << i;
  }
}

// Applies kGrads[step] to var.
void Step(const Optimizer& optimizer, int step, std::vector<float>* var, SlotSet* slots) {
  optimizer.Apply(var->data(), kGrads[step].data(), var->size(), 1.0f, slots);
}

TEST(SgdTest, TwoUpdates) {
  std::unique_ptr<Optimizer> sgd = Make(Config("sgd"));
  std::vector<float> var = kVar0;
  SlotSet slots = sgd->CreateSlots(3);
  Step(*sgd, 0, &var, &slots);  // var - 0.1 * {0.1, -0.2, 0.3}
  ExpectNear(var, {0.99, -1.98, 0.47});
  Step(*sgd, 1, &var, &slots);  // var - 0.1 * {0.4, 0, -0.5}
  ExpectNear(var, {0.95, -1.98, 0.52});
  EXPECT_EQ(slots.updates, 2);
}

TEST(MomentumTest, ThreeUpdates) {
  std::unique_ptr<Optimizer> momentum = Make(Config("momentum"));
  std::vector<float> var = kVar0;
  SlotSet slots = momentum->CreateSlots(3);
  // accum = g; var -= 0.1 * accum
  Step(*momentum, 0, &var, &slots);
  ExpectNear(slots.values[0], {0.1, -0.2, 0.3});
  ExpectNear(var, {0.99, -1.98, 0.47});
  // accum = 0.9 * {0.1, -0.2, 0.3} + {0.4, 0, -0.5}
  Step(*momentum, 1, &var, &slots);
  ExpectNear(slots.values[0], {0.49, -0.18, -0.23});
  ExpectNear(var, {0.941, -1.962, 0.493});
  // accum = 0.9 * {0.49, -0.18, -0.23} + {-0.3, 0.6, 0.2}
  Step(*momentum, 2, &var, &slots);
  ExpectNear(slots.values[0], {0.141, 0.438, -0.007});
  ExpectNear(var, {0.9269, -2.0058, 0.4937});
}

TEST(MomentumTest, NesterovThreeUpdates) {
  OptimizerConfig config = Config("momentum");
  config.use_nesterov = true;
  std::unique_ptr<Optimizer> momentum = Make(config);
  std::vector<float> var = kVar0;
  SlotSet slots = momentum->CreateSlots(3);
  // Same accumulators as above; var -= 0.1 * (g + 0.9 * accum).
  Step(*momentum, 0, &var, &slots);  // 0.1 * 1.9 * g
  ExpectNear(var, {0.981, -1.962, 0.443});
  // var -= 0.1 * ({0.4, 0, -0.5} + 0.9 * {0.49, -0.18, -0.23})
  Step(*momentum, 1, &var, &slots);
  ExpectNear(var, {0.8969, -1.9458, 0.5137});
  // var -= 0.1 * ({-0.3, 0.6, 0.2} + 0.9 * {0.141, 0.438, -0.007})
  Step(*momentum, 2, &var, &slots);
  ExpectNear(var, {0.91421, -2.04522, 0.49433});
}

TEST(AdagradTest, ThreeUpdates) {
  std::unique_ptr<Optimizer> adagrad = Make(Config("adagrad"));
  std::vector<float> var = kVar0;
  SlotSet slots = adagrad->CreateSlots(3);
  ExpectNear(slots.values[0], {0.1, 0.1, 0.1});
  // accum = 0.1 + g^2; var -= 0.1 * g / sqrt(accum)
  Step(*adagrad, 0, &var, &slots);
  ExpectNear(slots.values[0], {0.11, 0.14, 0.19});
  ExpectNear(var, {1.0 - 0.01 / std::sqrt(0.11), -2.0 + 0.02 / std::sqrt(0.14),
                   0.5 - 0.03 / std::sqrt(0.19)});
  Step(*adagrad, 1, &var, &slots);
  ExpectNear(slots.values[0], {0.27, 0.14, 0.44});
  ExpectNear(var,
             {1.0 - 0.01 / std::sqrt(0.11) - 0.04 / std::sqrt(0.27), -2.0 + 0.02 / std::sqrt(0.14),
              0.5 - 0.03 / std::sqrt(0.19) + 0.05 / std::sqrt(0.44)});
  Step(*adagrad, 2, &var, &slots);
  ExpectNear(slots.values[0], {0.36, 0.5, 0.48});
  ExpectNear(var, {0.94286883, -2.03140057, 0.477685603});
}

TEST(AdamTest, ThreeUpdatesAndUpdateCount) {
  std::unique_ptr<Optimizer> adam = Make(Config("adam"));
  std::vector<float> var = kVar0;
  SlotSet slots = adam->CreateSlots(3);
  EXPECT_EQ(slots.updates, 0);
  // t=1: lr_t = 0.1 * sqrt(0.001) / 0.1; m = 0.1 g; v = 0.001 g^2, so the
  // step is lr * sign(g), less a hair for epsilon.
  Step(*adam, 0, &var, &slots);
  EXPECT_EQ(slots.updates, 1);
  ExpectNear(slots.values[0], {0.01, -0.02, 0.03});
  ExpectNear(slots.values[1], {1e-5, 4e-5, 9e-5});
  ExpectNear(var, {0.900000316, -1.90000016, 0.400000105});
  // t=2: lr_t = 0.1 * sqrt(1 - 0.999^2) / (1 - 0.9^2) = 0.0235316725
  Step(*adam, 1, &var, &slots);
  EXPECT_EQ(slots.updates, 2);
  ExpectNear(slots.values[0], {0.049, -0.018, -0.023});
  ExpectNear(slots.values[1], {0.00016999, 3.996e-5, 0.00033991});
  ExpectNear(var, {0.811562735, -1.83299444, 0.42935621});
  // t=3: lr_t = 0.1 * sqrt(1 - 0.999^3) / (1 - 0.9^3) = 0.0202010597
  Step(*adam, 2, &var, &slots);
  EXPECT_EQ(slots.updates, 3);
  ExpectNear(slots.values[0], {0.0141, 0.0438, -0.0007});
  ExpectNear(slots.values[1], {0.00025982001, 0.00039992004, 0.00037957009});
  ExpectNear(var, {0.793891915, -1.87723916, 0.430082025});
}

// Properties every optimizer shares.
class AllOptimizersTest : public testing::TestWithParam<const char*> {};

TEST_P(AllOptimizersTest, LrScaleMultipliesLearningRate) {
  OptimizerConfig halved = Config(GetParam());
  halved.learning_rate = 0.05f;
  std::unique_ptr<Optimizer> scaled = Make(Config(GetParam()));
  std::unique_ptr<Optimizer> plain = Make(halved);
  std::vector<float> a = kVar0, b = kVar0;
  SlotSet slots_a = scaled->CreateSlots(3), slots_b = plain->CreateSlots(3);
  for (int step = 0; step < 3; ++step) {
    scaled->Apply(a.data(), kGrads[step].data(), 3, 0.5f, &slots_a);
    plain->Apply(b.data(), kGrads[step].data(), 3, 1.0f, &slots_b);
  }
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(a[i], b[i]);
  EXPECT_NE(a, kVar0);
}

TEST_P(AllOptimizersTest, CountsUpdates) {
  std::unique_ptr<Optimizer> optimizer = Make(Config(GetParam()));
  std::vector<float> var = kVar0;
  SlotSet slots = optimizer->CreateSlots(3);
  for (int step = 0; step < 3; ++step) {
    Step(*optimizer, step, &var, &slots);
    EXPECT_EQ(slots.updates, step + 1);
  }
}

// A gradient inside a network buffer sits at any 4-byte offset; the result
// must not depend on alignment. 37 floats exercise the vector and tail paths.
TEST_P(AllOptimizersTest, UnalignedPointersGiveSameResult) {
  std::unique_ptr<Optimizer> optimizer = Make(Config(GetParam()));
  constexpr int kN = 37;
  std::vector<float> aligned_var(kN), aligned_grad(kN);
  std::vector<float> shifted_var(kN + 1), shifted_grad(kN + 3);
  for (int i = 0; i < kN; ++i) {
    const float x = static_cast<float>(i);
    aligned_var[i] = shifted_var[i + 1] = 0.1f * x - 1.0f;
    aligned_grad[i] = shifted_grad[i + 3] = std::sin(0.7f * x);
  }
  SlotSet aligned_slots = optimizer->CreateSlots(kN);
  SlotSet shifted_slots = optimizer->CreateSlots(kN);
  for (int step = 0; step < 2; ++step) {
    optimizer->Apply(aligned_var.data(), aligned_grad.data(), kN, 1.0f, &aligned_slots);
    optimizer->Apply(shifted_var.data() + 1, shifted_grad.data() + 3, kN, 1.0f, &shifted_slots);
  }
  for (int i = 0; i < kN; ++i) {
    EXPECT_FLOAT_EQ(shifted_var[i + 1], aligned_var[i]) << "element " << i;
  }
}

TEST_P(AllOptimizersTest, ConfigIsKept) {
  OptimizerConfig config = Config(GetParam());
  config.learning_rate = 0.25f;
  std::unique_ptr<Optimizer> optimizer = Make(config);
  EXPECT_EQ(optimizer->config().name, GetParam());
  EXPECT_EQ(optimizer->config().learning_rate, 0.25f);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, AllOptimizersTest,
                         testing::Values("sgd", "momentum", "adagrad", "adam"));

TEST(SlotsTest, NamesAndSizes) {
  const struct {
    const char* optimizer;
    std::vector<std::string> names;
    float initial_value;
  } kCases[] = {
      {"sgd", {}, 0.0f},
      {"momentum", {"momentum"}, 0.0f},
      {"adagrad", {"accumulator"}, 0.1f},
      {"adam", {"m", "v"}, 0.0f},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.optimizer);
    SlotSet slots = Make(Config(c.optimizer))->CreateSlots(5);
    EXPECT_EQ(slots.names, c.names);
    ASSERT_EQ(slots.values.size(), c.names.size());
    for (const std::vector<float>& values : slots.values) {
      EXPECT_EQ(values, std::vector<float>(5, c.initial_value));
    }
    EXPECT_EQ(slots.updates, 0);
  }
}

TEST(SlotsTest, InitialAccumulatorIsConfigurable) {
  OptimizerConfig config = Config("adagrad");
  config.initial_accumulator = 0.5f;
  EXPECT_EQ(Make(config)->CreateSlots(2).values[0], std::vector<float>(2, 0.5f));
}

TEST(SlotsDeathTest, ForeignSlotsAreABug) {
  std::unique_ptr<Optimizer> momentum = Make(Config("momentum"));
  SlotSet adagrad_slots = Make(Config("adagrad"))->CreateSlots(3);
  SlotSet short_slots = momentum->CreateSlots(2);
  std::vector<float> var = kVar0;
  EXPECT_DEATH(Step(*momentum, 0, &var, &adagrad_slots), "accumulator");
  EXPECT_DEATH(Step(*momentum, 0, &var, &short_slots), "slot momentum");
}

// Expects InvalidArgument whose message names the field and the value.
void ExpectRejected(const OptimizerConfig& config, const std::string& field,
                    const std::string& value) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  ASSERT_FALSE(optimizer.ok()) << field;
  EXPECT_EQ(optimizer.status().code(), Code::kInvalidArgument);
  const std::string& message = optimizer.status().message();
  EXPECT_NE(message.find(field), std::string::npos) << message;
  EXPECT_NE(message.find(value), std::string::npos) << message;
}

TEST(MakeOptimizerTest, RejectsBadConfigs) {
  OptimizerConfig config = Config("rmsprop");
  ExpectRejected(config, "name", "rmsprop");

  for (const char* name : {"sgd", "momentum", "adagrad", "adam"}) {
    config = Config(name);
    config.learning_rate = 0.0f;
    ExpectRejected(config, "learning_rate", "0");
    config.learning_rate = -1.0f;
    ExpectRejected(config, "learning_rate", "-1");
    config.learning_rate = std::numeric_limits<float>::quiet_NaN();
    ExpectRejected(config, "learning_rate", "nan");
  }

  config = Config("momentum");
  config.momentum = 1.0f;
  ExpectRejected(config, "momentum", "1");

  config = Config("adagrad");
  config.initial_accumulator = 0.0f;
  ExpectRejected(config, "initial_accumulator", "0");

  config = Config("adam");
  config.beta1 = 1.0f;
  ExpectRejected(config, "beta1", "1");
  config = Config("adam");
  config.beta2 = -0.5f;
  ExpectRejected(config, "beta2", "-0.5");
  config = Config("adam");
  config.epsilon = 0.0f;
  ExpectRejected(config, "epsilon", "0");
}

TEST(MakeOptimizerTest, IgnoresFieldsOfOtherOptimizers) {
  OptimizerConfig config = Config("sgd");
  config.momentum = 5.0f;
  config.initial_accumulator = -1.0f;
  config.beta1 = 2.0f;
  config.epsilon = 0.0f;
  EXPECT_TRUE(MakeOptimizer(config).ok());
}

TEST(MakeOptimizerTest, UnknownNameListsKnownOnes) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(Config("Adam"));
  ASSERT_FALSE(optimizer.ok());
  EXPECT_NE(optimizer.status().message().find("sgd, momentum, adagrad, adam"), std::string::npos)
      << optimizer.status().message();
}

}  // namespace
}  // namespace pst
