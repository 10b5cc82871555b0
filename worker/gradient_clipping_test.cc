#include "worker/gradient_clipping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace pst {
namespace {

Tensor Of(Shape shape, const std::vector<float>& values) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::copy(values.begin(), values.end(), t.f32());
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.f32(), t.f32() + t.num_elements());
}

// Two variables whose gradients have norms 3 and 4: the global norm is 5.
std::vector<Tensor> ThreeFour() {
  std::vector<Tensor> grads;
  grads.push_back(Of({2}, {3.0f, 0.0f}));
  grads.push_back(Of({2, 2}, {0.0f, 4.0f, 0.0f, 0.0f}));
  return grads;
}

TEST(ClipByGlobalNormTest, ScalesEveryGradientByClipOverTheGlobalNorm) {
  std::vector<Tensor> grads = ThreeFour();
  const ClipResult result = ClipByGlobalNorm(2.5f, &grads);
  EXPECT_DOUBLE_EQ(result.global_norm, 5.0);
  EXPECT_TRUE(result.clipped);
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{1.5f, 0.0f}));  // scale 0.5
  EXPECT_EQ(Values(grads[1]), (std::vector<float>{0.0f, 2.0f, 0.0f, 0.0f}));
}

TEST(ClipByGlobalNormTest, LeavesAGradientAtOrBelowTheThresholdAlone) {
  for (float clip_norm : {5.0f, 10.0f}) {
    std::vector<Tensor> grads = ThreeFour();
    const ClipResult result = ClipByGlobalNorm(clip_norm, &grads);
    EXPECT_DOUBLE_EQ(result.global_norm, 5.0);
    EXPECT_FALSE(result.clipped);
    EXPECT_EQ(Values(grads[0]), (std::vector<float>{3.0f, 0.0f}));
    EXPECT_EQ(Values(grads[1]), (std::vector<float>{0.0f, 4.0f, 0.0f, 0.0f}));
  }
}

// Batch norm's moving statistics push deltas, not gradients: the delta in
// the middle is neither counted (the norm stays 5) nor scaled.
TEST(ClipByGlobalNormTest, LeavesAMovingAverageOut) {
  std::vector<Tensor> grads = ThreeFour();
  grads.insert(grads.begin() + 1, Of({2}, {100.0f, -100.0f}));
  const ClipResult result = ClipByGlobalNorm(2.5f, &grads, {false, true});
  EXPECT_DOUBLE_EQ(result.global_norm, 5.0);
  EXPECT_TRUE(result.clipped);
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{1.5f, 0.0f}));
  EXPECT_EQ(Values(grads[1]), (std::vector<float>{100.0f, -100.0f}));
  EXPECT_EQ(Values(grads[2]), (std::vector<float>{0.0f, 2.0f, 0.0f, 0.0f}));
}

// A click model's gradient: one variable (norm 6), then a table's row
// gradients, 2 rows of dim 2 (norm 8): the global norm is 10, not 6.
TEST(ClipByGlobalNormTest, CountsTheRowGradientsOfATable) {
  std::vector<Tensor> grads;
  grads.push_back(Of({3}, {0.0f, 6.0f, 0.0f}));              // 36
  grads.push_back(Of({2, 2}, {0.0f, 8.0f, 0.0f, 0.0f}));     // rows: 64
  const ClipResult result = ClipByGlobalNorm(5.0f, &grads);  // norm 10, scale 0.5
  EXPECT_DOUBLE_EQ(result.global_norm, 10.0);
  EXPECT_TRUE(result.clipped);
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{0.0f, 3.0f, 0.0f}));
  EXPECT_EQ(Values(grads[1]), (std::vector<float>{0.0f, 4.0f, 0.0f, 0.0f}));
}

TEST(ClipByGlobalNormTest, ANonFiniteGradientIsLeftForTheDivergenceCheck) {
  std::vector<Tensor> grads = ThreeFour();
  grads[1].f32()[3] = std::numeric_limits<float>::quiet_NaN();
  ClipResult result = ClipByGlobalNorm(1.0f, &grads);
  EXPECT_TRUE(std::isnan(result.global_norm));
  EXPECT_FALSE(result.clipped);
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{3.0f, 0.0f}));

  grads = ThreeFour();
  grads[0].f32()[1] = std::numeric_limits<float>::infinity();
  result = ClipByGlobalNorm(1.0f, &grads);
  EXPECT_TRUE(std::isinf(result.global_norm));
  EXPECT_FALSE(result.clipped);
  EXPECT_EQ(grads[0].f32()[0], 3.0f);
}

TEST(ClipByGlobalNormTest, LargeFiniteGradientsDoNotOverflowTheNorm) {
  std::vector<Tensor> grads;
  grads.push_back(Of({2}, {3e30f, 4e30f}));  // squares overflow a float
  const ClipResult result = ClipByGlobalNorm(1.0f, &grads);
  EXPECT_NEAR(result.global_norm, 5e30, 1e24);
  EXPECT_TRUE(result.clipped);
  EXPECT_NEAR(grads[0].f32()[0], 0.6f, 1e-6);
  EXPECT_NEAR(grads[0].f32()[1], 0.8f, 1e-6);
}

}  // namespace
}  // namespace pst
