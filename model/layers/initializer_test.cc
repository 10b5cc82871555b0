#include "model/layers/initializer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace pst {
namespace {

VariableSpec Glorot(const std::string& name, Shape shape) {
  return {name, DType::kFloat32, std::move(shape), Initializer::kGlorotUniform};
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.f32(), t.f32() + t.num_elements());
}

TEST(InitializerTest, SameSeedAndNameGiveSameValues) {
  const VariableSpec spec = Glorot("dense0/weights", {30, 20});
  EXPECT_EQ(Values(InitializeVariable(spec, 42)), Values(InitializeVariable(spec, 42)));
}

TEST(InitializerTest, DifferentNameOrSeedGiveDifferentValues) {
  const auto a = Values(InitializeVariable(Glorot("dense0/weights", {30, 20}), 42));
  const auto b = Values(InitializeVariable(Glorot("dense1/weights", {30, 20}), 42));
  const auto c = Values(InitializeVariable(Glorot("dense0/weights", {30, 20}), 43));
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

TEST(InitializerTest, ValuesArePinned) {
  // The values must not change between builds: processes, restarts and
  // checkpoints rely on them. Update only for a deliberate format change.
  const Tensor t = InitializeVariable(Glorot("dense0/weights", {2, 2}), 1);
  const std::vector<float> want = {-0x1.82f914p-1f, 0x1.6c9a6cp-1f, -0x1.b41c82p-1f,
                                   0x1.17f2cep-1f};
  EXPECT_EQ(Values(t), want);
}

TEST(InitializerTest, GlorotRespectsItsBoundAndFillsIt) {
  const VariableSpec spec = Glorot("w", {784, 100});
  const Tensor t = InitializeVariable(spec, 7);
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), spec.shape);
  const float limit = static_cast<float>(std::sqrt(6.0 / (784 + 100)));
  const std::vector<float> v = Values(t);
  double sum = 0, sum_sq = 0;
  for (float x : v) {
    ASSERT_LE(std::abs(x), limit);
    sum += x;
    sum_sq += double{x} * x;
  }
  const double n = static_cast<double>(v.size());
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.99 * limit);
  EXPECT_LT(*std::min_element(v.begin(), v.end()), -0.99 * limit);
  EXPECT_NEAR(sum / n, 0.0, 0.01 * limit);
  // U(-a, a) has variance a^2 / 3.
  EXPECT_NEAR(sum_sq / n, limit * limit / 3.0, 0.02 * limit * limit);
}

TEST(InitializerTest, GlorotFansOfAConvolutionFilter) {
  // (R,S,C,K) = (5,5,20,50): fan_in = 5*5*20, fan_out = 5*5*50.
  const Tensor t = InitializeVariable(Glorot("conv1/weights", {5, 5, 20, 50}), 7);
  const float limit = static_cast<float>(std::sqrt(6.0 / (500 + 1250)));
  const std::vector<float> v = Values(t);
  for (float x : v) ASSERT_LE(std::abs(x), limit);
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.99 * limit);
  EXPECT_LT(*std::min_element(v.begin(), v.end()), -0.99 * limit);
}

TEST(InitializerTest, ZerosForFloatAndInt64) {
  const Tensor f =
      InitializeVariable({"dense0/bias", DType::kFloat32, {10}, Initializer::kZeros}, 1);
  EXPECT_EQ(Values(f), std::vector<float>(10, 0.0f));
  const Tensor i = InitializeVariable({"global_step", DType::kInt64, {}, Initializer::kZeros}, 1);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.num_elements(), 1);
  EXPECT_EQ(i.i64()[0], 0);
}

TEST(InitializerTest, Ones) {
  const Tensor f =
      InitializeVariable({"bn0/gamma", DType::kFloat32, {3, 2}, Initializer::kOnes}, 1);
  EXPECT_EQ(Values(f), std::vector<float>(6, 1.0f));
}

}  // namespace
}  // namespace pst
