#include "ps/optimizers/weight_decay.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ps/optimizers/optimizer.h"

namespace pst {
namespace {

std::unique_ptr<Optimizer> Make(const std::string& name, float lr) {
  OptimizerConfig config;
  config.name = name;
  config.learning_rate = lr;
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  EXPECT_TRUE(optimizer.ok()) << optimizer.status().ToString();
  return std::move(optimizer).value();
}

TEST(DecaysWeightTest, WeightsAndFiltersDecayBiasesAndScalarsDoNot) {
  EXPECT_TRUE(DecaysWeight({"dense0/weights", DType::kFloat32, {784, 100}}));
  EXPECT_TRUE(DecaysWeight({"conv0/weights", DType::kFloat32, {5, 5, 1, 20}}));
  EXPECT_FALSE(DecaysWeight({"dense0/bias", DType::kFloat32, {100}}));
  EXPECT_FALSE(DecaysWeight({"global_step", DType::kInt64, {}}));
  EXPECT_FALSE(DecaysWeight({"counts", DType::kInt64, {3, 3}}));
}

TEST(ApplyWeightDecayTest, ShrinksByTheRateTimesTheDecay) {
  std::vector<float> w = {1.0f, -2.0f, 0.0f};
  ApplyWeightDecay(w.data(), 3, /*lr=*/0.1f, /*weight_decay=*/0.01f);  // keep 0.999
  EXPECT_FLOAT_EQ(w[0], 0.999f);
  EXPECT_FLOAT_EQ(w[1], -1.998f);
  EXPECT_FLOAT_EQ(w[2], 0.0f);
}

TEST(ApplyWeightDecayTest, ZeroDecayOrZeroRateChangesNothing) {
  std::vector<float> w = {1.5f, -2.5f};
  ApplyWeightDecay(w.data(), 2, 0.1f, 0.0f);
  ApplyWeightDecay(w.data(), 2, 0.0f, 0.5f);
  EXPECT_EQ(w, (std::vector<float>{1.5f, -2.5f}));
}

// SGDW by hand: w = 1, -2; g = 0.5, 0.5; lr 0.1, wd 0.01.
// Decay: 0.999, -1.998; then w -= 0.1 * 0.5: 0.949, -2.048.
TEST(ApplyWeightDecayTest, SgdwStep) {
  const std::unique_ptr<Optimizer> sgd = Make("sgd", 0.1f);
  std::vector<float> w = {1.0f, -2.0f};
  const std::vector<float> g = {0.5f, 0.5f};
  SlotSet slots = sgd->CreateSlots(2);
  ApplyWeightDecay(w.data(), 2, sgd->config().learning_rate, 0.01f);
  sgd->Apply(w.data(), g.data(), 2, 1.0f, &slots);
  EXPECT_NEAR(w[0], 0.949, 1e-6);
  EXPECT_NEAR(w[1], -2.048, 1e-6);
}

// AdamW's first step by hand: w = 1, g = 0.3, lr 0.1, wd 0.1, with a
// schedule that halves the rate (lr_scale 0.5: rate 0.05).
// Decay: 1 * (1 - 0.05 * 0.1) = 0.995. Adam's first step moves by the rate
// times sign(g) (m_hat / sqrt(v_hat) = g / |g|): 0.995 - 0.05 = 0.945.
TEST(ApplyWeightDecayTest, AdamwStepWithAScheduledRate) {
  const std::unique_ptr<Optimizer> adam = Make("adam", 0.1f);
  const float lr_scale = 0.5f;
  std::vector<float> w = {1.0f};
  const std::vector<float> g = {0.3f};
  SlotSet slots = adam->CreateSlots(1);
  ApplyWeightDecay(w.data(), 1, adam->config().learning_rate * lr_scale, 0.1f);
  adam->Apply(w.data(), g.data(), 1, lr_scale, &slots);
  EXPECT_NEAR(w[0], 0.945, 1e-6);
}

}  // namespace
}  // namespace pst
