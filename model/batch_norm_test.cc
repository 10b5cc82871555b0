// BatchNorm against hand-computed statistics, outputs and moving-average
// deltas, and its backward pass against central finite differences of
// sum(y .* r) (as in layers_test.cc, whose helpers are file-local).
#include "model/batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "model/fake_device_kernels.h"

namespace pst {
namespace {

std::vector<float> RandomVector(int64_t n, float lo, float hi, std::mt19937* rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(*rng);
  return v;
}

void ExpectAllNear(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
}

// Four rows of two features: feature 0 has mean 3 and biased variance 4,
// feature 1 mean 2 and biased variance 12.
const std::vector<float> kX = {1, 0, 5, 0, 1, 0, 5, 8};

// One Forward of `layer` on x with the given variables; returns y.
std::vector<float> RunForward(BatchNorm& layer, const std::vector<float>& x, int64_t batch,
                              const std::vector<float>& gamma_minus_one,
                              const std::vector<float>& beta, bool training) {
  EXPECT_TRUE(layer.Reserve(batch).ok());
  const float* params[] = {gamma_minus_one.data(), beta.data()};
  std::vector<float> y(x.size());
  layer.Forward(params, x.data(), y.data(), batch, training);
  return y;
}

TEST(BatchNormTest, DeclaresScaleAndOffsetPerChannel) {
  CpuKernels kernels;
  BatchNorm bn("bn1", InputShape({4, 3, 5}), kernels);
  EXPECT_EQ(bn.in_dim(), 60);
  EXPECT_EQ(bn.out_dim(), 60);
  EXPECT_EQ(bn.channels(), 5);
  EXPECT_EQ(bn.Describe(), "bn1 (BatchNorm, 4x3x5 image)");
  const std::vector<VariableSpec> specs = bn.Variables();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "bn1/gamma_minus_one");
  EXPECT_EQ(specs[1].name, "bn1/beta");
  for (const VariableSpec& spec : specs) {
    EXPECT_EQ(spec.shape, (Shape{5}));
    EXPECT_EQ(spec.initializer, Initializer::kZeros);
  }
  EXPECT_EQ(bn.moving().mean, std::vector<float>(5, 0.0f));
  EXPECT_EQ(bn.moving().variance, std::vector<float>(5, 1.0f));
}

TEST(BatchNormTest, TrainingNormalizesWithTheBatchStatistics) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels);
  // gamma = {2, 0.5}, beta = {0, 1}, epsilon 1e-3.
  const std::vector<float> y = RunForward(bn, kX, 4, {1, -0.5f}, {0, 1}, /*training=*/true);
  const float s0 = 2 / std::sqrt(4.001f), s1 = 0.5f / std::sqrt(12.001f);
  ExpectAllNear(
      y, {-2 * s0, -2 * s1 + 1, 2 * s0, -2 * s1 + 1, -2 * s0, -2 * s1 + 1, 2 * s0, 6 * s1 + 1},
      1e-6);
  EXPECT_EQ(bn.batch_statistics().mean, (std::vector<float>{3, 2}));
  EXPECT_EQ(bn.batch_statistics().variance, (std::vector<float>{4, 12}));
}

// The same numbers as an image: 2 examples of 1x2 pixels with 2 channels,
// normalized per channel over examples and pixels together.
TEST(BatchNormTest, ImagesNormalizePerChannelOverBatchAndPixels) {
  CpuKernels kernels;
  BatchNorm features("bn", 2, kernels), image("bn", InputShape({1, 2, 2}), kernels);
  const std::vector<float> gamma_minus_one = {1, -0.5f}, beta = {0, 1};
  EXPECT_EQ(RunForward(image, kX, 2, gamma_minus_one, beta, true),
            RunForward(features, kX, 4, gamma_minus_one, beta, true));
  EXPECT_EQ(image.batch_statistics().variance, (std::vector<float>{4, 12}));
}

TEST(BatchNormTest, InferenceNormalizesWithTheMovingStatistics) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels);
  // Moving standard deviations sqrt(variance + 1e-3) = {2, 1}.
  bn.set_moving({{1, -1}, {3.999f, 0.999f}});
  const std::vector<float> y = RunForward(bn, kX, 4, {0, 0}, {0.5f, 0}, /*training=*/false);
  // (x - 1) / 2 + 0.5 and x + 1.
  ExpectAllNear(y, {0.5f, 1, 2.5f, 1, 0.5f, 1, 2.5f, 9}, 1e-6);
  EXPECT_EQ(bn.moving().mean, (std::vector<float>{1, -1}));
}

TEST(BatchNormTest, MovingAverageDeltaStepsTowardTheUnbiasedBatchStatistics) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels, {/*momentum=*/0.9, /*epsilon=*/1e-3});
  bn.set_moving({{1, 1}, {2, 2}});
  RunForward(bn, kX, 4, {0, 0}, {0, 0}, /*training=*/true);
  // Unbiased variances 4 * 4/3 = 16/3 and 12 * 4/3 = 16; deltas 0.1 * (batch - moving).
  const BatchNormStatistics delta = bn.MovingAverageDelta();
  ExpectAllNear(delta.mean, {0.2f, 0.1f}, 1e-6);
  ExpectAllNear(delta.variance, {(16.0f / 3 - 2) / 10, 1.4f}, 1e-6);
  // The layer leaves applying it to the ps.
  EXPECT_EQ(bn.moving().mean, (std::vector<float>{1, 1}));
}

// d sum(y .* r) / d v by central differences; *v is restored.
double NumericalDerivative(float* v, const std::function<double()>& f) {
  const float saved = *v;
  *v = saved + 1e-2f;
  const float hi = *v;
  const double f_hi = f();
  *v = saved - 1e-2f;
  const float lo = *v;
  const double f_lo = f();
  *v = saved;
  return (f_hi - f_lo) / (double{hi} - double{lo});
}

void ExpectGradientsMatch(const std::vector<float>& analytic, float* values,
                          const std::function<double()>& f, const std::string& what) {
  for (size_t i = 0; i < analytic.size(); ++i) {
    const double numeric = NumericalDerivative(&values[i], f);
    EXPECT_NEAR(analytic[i], numeric, 1e-4 + 1e-3 * std::abs(numeric)) << what << "[" << i << "]";
  }
}

// Checks dx, d gamma and d beta of a training Forward on random x.
void CheckGradients(BatchNorm& bn, int64_t batch) {
  std::mt19937 rng(8);
  std::vector<float> x = RandomVector(batch * bn.in_dim(), -1, 2, &rng);
  const std::vector<float> r = RandomVector(x.size(), -1, 1, &rng);
  std::vector<std::vector<float>> params = {RandomVector(bn.channels(), -0.5f, 0.5f, &rng),
                                            RandomVector(bn.channels(), -1, 1, &rng)};
  const float* param_ptrs[] = {params[0].data(), params[1].data()};
  ASSERT_TRUE(bn.Reserve(batch).ok());
  std::vector<float> y(x.size());
  const auto f = [&]() {
    bn.Forward(param_ptrs, x.data(), y.data(), batch, /*training=*/true);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += double{y[i]} * r[i];
    return sum;
  };
  f();
  std::vector<std::vector<float>> grads(2, std::vector<float>(bn.channels(), 123.0f));
  float* grad_ptrs[] = {grads[0].data(), grads[1].data()};
  std::vector<float> dx(x.size(), 123.0f);
  bn.Backward(param_ptrs, x.data(), y.data(), r.data(), grad_ptrs, dx.data(), batch);

  ExpectGradientsMatch(dx, x.data(), f, "dx");
  ExpectGradientsMatch(grads[0], params[0].data(), f, "gamma");
  ExpectGradientsMatch(grads[1], params[1].data(), f, "beta");
}

TEST(BatchNormTest, DenseGradientsMatchFiniteDifferences) {
  CpuKernels kernels;
  BatchNorm bn("bn", 3, kernels);
  CheckGradients(bn, /*batch=*/5);
}

TEST(BatchNormTest, ConvGradientsMatchFiniteDifferences) {
  CpuKernels kernels;
  BatchNorm bn("bn", InputShape({3, 2, 2}), kernels);
  CheckGradients(bn, /*batch=*/2);
}

// Forward, Backward and an inference Forward of an image BatchNorm with
// every buffer in `kernels`' memory: y, dx, d gamma, d beta, y_inference.
std::vector<std::vector<float>> RunOn(Kernels& kernels) {
  const int64_t batch = 3;
  BatchNorm bn("bn", InputShape({2, 3, 4}), kernels);
  bn.set_moving({{0.1f, 0.2f, 0.3f, 0.4f}, {1, 2, 3, 4}});
  std::mt19937 rng(4);
  const int64_t n = batch * bn.in_dim(), c = bn.channels();
  std::vector<std::vector<float>> host = {
      RandomVector(n, -1, 1, &rng), RandomVector(n, -1, 1, &rng), RandomVector(c, -1, 1, &rng),
      RandomVector(c, -1, 1, &rng), std::vector<float>(n),        std::vector<float>(n),
      std::vector<float>(c),        std::vector<float>(c)};
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (const std::vector<float>& h : host) {
    buffers.push_back(std::move(kernels.Allocate(h.size() * sizeof(float))).value());
    kernels.CopyToDevice(h.data(), buffers.back()->data(), h.size() * sizeof(float));
  }
  float *x = buffers[0]->f32(), *dy = buffers[1]->f32(), *y = buffers[4]->f32(),
        *dx = buffers[5]->f32();
  const float* params[] = {buffers[2]->f32(), buffers[3]->f32()};
  float* grads[] = {buffers[6]->f32(), buffers[7]->f32()};
  EXPECT_TRUE(bn.Reserve(batch).ok());
  bn.Forward(params, x, y, batch, true);
  bn.Backward(params, x, y, dy, grads, dx, batch);
  std::vector<std::vector<float>> out;
  const auto read = [&](const float* p, int64_t size) {
    out.emplace_back(size);
    kernels.CopyToHost(p, out.back().data(), size * sizeof(float));
  };
  read(y, n);
  read(dx, n);
  read(grads[0], c);
  read(grads[1], c);
  bn.Forward(params, x, y, batch, false);
  read(y, n);
  EXPECT_TRUE(kernels.TakeError().ok());
  return out;
}

// The staged path a GPU takes (the fake checks that every kernel and copy
// gets device memory) computes exactly what the CPU does.
TEST(BatchNormTest, DeviceBackEndMatchesCpuExactly) {
  CpuKernels cpu;
  FakeDeviceKernels device;
  EXPECT_EQ(RunOn(device), RunOn(cpu));
}

TEST(BatchNormTest, ForwardBeyondReserveIsABrokenInvariant) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels);
  ASSERT_TRUE(bn.Reserve(3).ok());
  const std::vector<float> zeros = {0, 0};
  const float* params[] = {zeros.data(), zeros.data()};
  std::vector<float> y(kX.size());
  EXPECT_DEATH(bn.Forward(params, kX.data(), y.data(), 4, true), "Reserve");
}

}  // namespace
}  // namespace pst
