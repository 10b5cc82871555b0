// BatchNorm against hand-computed statistics, outputs and moving-average
// deltas (in the moving statistics' gradient slots), and its backward pass against central finite
// differences of sum(y .* r) (as in layers_test.cc, whose helpers are file-local).
#include "model/layers/batch_norm.h"

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
#include "model/model_test_util.h"

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

// The four variables of a BatchNorm over C channels.
struct Params {
  std::vector<float> gamma, beta, moving_mean, moving_variance;
  const float* ptrs[4];
  Params(std::vector<float> g, std::vector<float> b, std::vector<float> m, std::vector<float> v)
      : gamma(std::move(g)),
        beta(std::move(b)),
        moving_mean(std::move(m)),
        moving_variance(std::move(v)),
        ptrs{gamma.data(), beta.data(), moving_mean.data(), moving_variance.data()} {}
  Params(const Params&) = delete;  // ptrs point into this object
};

// Gamma and beta as given, moving mean 0 and variance 1 (as initialized).
Params ScaleAndOffset(std::vector<float> gamma, std::vector<float> beta) {
  const size_t c = gamma.size();
  return Params(std::move(gamma), std::move(beta), std::vector<float>(c, 0.0f),
                std::vector<float>(c, 1.0f));
}

// One Forward of `layer` on x with the given variables; returns y.
std::vector<float> RunForward(BatchNorm& layer, const std::vector<float>& x, int64_t batch,
                              const Params& params, bool training) {
  EXPECT_TRUE(layer.Reserve(batch).ok());
  std::vector<float> y(x.size());
  layer.Forward(params.ptrs, x.data(), y.data(), batch, training);
  return y;
}

TEST(BatchNormTest, DeclaresScaleOffsetAndMovingStatisticsPerChannel) {
  CpuKernels kernels;
  BatchNorm bn("bn1", InputShape({4, 3, 5}), kernels);
  EXPECT_EQ(bn.in_dim(), 60);
  EXPECT_EQ(bn.out_dim(), 60);
  EXPECT_EQ(bn.channels(), 5);
  EXPECT_EQ(bn.Describe(), "bn1 (BatchNorm, 4x3x5 image)");
  const std::vector<VariableSpec> specs = bn.Variables();
  ASSERT_EQ(specs.size(), 4u);
  const std::vector<std::string> names = {"bn1/gamma", "bn1/beta", "bn1/moving_mean",
                                          "bn1/moving_variance"};
  const std::vector<Initializer> initializers = {Initializer::kOnes, Initializer::kZeros,
                                                 Initializer::kZeros, Initializer::kOnes};
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].name, names[i]);
    EXPECT_EQ(specs[i].shape, (Shape{5}));
    EXPECT_EQ(specs[i].initializer, initializers[i]) << i;
    EXPECT_EQ(specs[i].moving_average, i >= 2) << i;
  }
  const InferenceOp op = bn.Inference();
  EXPECT_EQ(op.kind, InferenceOp::Kind::kBatchNorm);
  EXPECT_EQ(op.image.height, 4);
  EXPECT_EQ(op.image.width, 3);
  EXPECT_EQ(op.image.in_channels, 5);
  EXPECT_DOUBLE_EQ(op.epsilon, 1e-3);
}

TEST(BatchNormTest, TrainingNormalizesWithTheBatchStatistics) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels);
  // gamma = {2, 0.5}, beta = {0, 1}, epsilon 1e-3.
  const std::vector<float> y =
      RunForward(bn, kX, 4, ScaleAndOffset({2, 0.5f}, {0, 1}), /*training=*/true);
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
  const Params params = ScaleAndOffset({2, 0.5f}, {0, 1});
  EXPECT_EQ(RunForward(image, kX, 2, params, true), RunForward(features, kX, 4, params, true));
  EXPECT_EQ(image.batch_statistics().variance, (std::vector<float>{4, 12}));
}

TEST(BatchNormTest, InferenceNormalizesWithTheMovingStatistics) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels);
  // Moving standard deviations sqrt(variance + 1e-3) = {2, 1}.
  const Params params({1, 1}, {0.5f, 0}, {1, -1}, {3.999f, 0.999f});
  const std::vector<float> y = RunForward(bn, kX, 4, params, /*training=*/false);
  // (x - 1) / 2 + 0.5 and x + 1.
  ExpectAllNear(y, {0.5f, 1, 2.5f, 1, 0.5f, 1, 2.5f, 9}, 1e-6);
}

TEST(BatchNormTest, ANegativeMovingVarianceCountsAsZero) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels, {/*momentum=*/0.9, /*epsilon=*/0.25});
  const Params params({1, 1}, {0, 0}, {0, 0}, {-3, 0});
  // Both channels divide by sqrt(0 + 0.25) = 0.5.
  ExpectAllNear(RunForward(bn, kX, 4, params, false), {2, 0, 10, 0, 2, 0, 10, 16}, 1e-6);
}

// The moving statistics' gradient slots: 0.1 * (batch - moving), with the
// unbiased batch variances 4 * 4/3 = 16/3 and 12 * 4/3 = 16.
TEST(BatchNormTest, BackwardPushesMovingAverageDeltasTowardTheUnbiasedBatchStatistics) {
  CpuKernels kernels;
  BatchNorm bn("bn", 2, kernels, {/*momentum=*/0.9, /*epsilon=*/1e-3});
  const Params params({1, 1}, {0, 0}, {1, 1}, {2, 2});
  std::vector<float> y = RunForward(bn, kX, 4, params, /*training=*/true);
  std::vector<std::vector<float>> grads(4, std::vector<float>(2, 123.0f));
  float* grad_ptrs[] = {grads[0].data(), grads[1].data(), grads[2].data(), grads[3].data()};
  const std::vector<float> dy(kX.size(), 0.0f);
  bn.Backward(params.ptrs, kX.data(), y.data(), dy.data(), grad_ptrs, nullptr, 4);
  ExpectAllNear(grads[2], {0.2f, 0.1f}, 1e-6);
  ExpectAllNear(grads[3], {(16.0f / 3 - 2) / 10, 1.4f}, 1e-6);
  // The layer leaves applying them to the ps.
  EXPECT_EQ(params.moving_mean, (std::vector<float>{1, 1}));
}

// Checks dx, d gamma and d beta of a training Forward on random x.
void CheckGradients(BatchNorm& bn, int64_t batch) {
  std::mt19937 rng(8);
  std::vector<float> x = RandomVector(batch * bn.in_dim(), -1, 2, &rng);
  const std::vector<float> r = RandomVector(x.size(), -1, 1, &rng);
  Params params(RandomVector(bn.channels(), 0.5f, 1.5f, &rng),
                RandomVector(bn.channels(), -1, 1, &rng), std::vector<float>(bn.channels(), 0.0f),
                std::vector<float>(bn.channels(), 1.0f));
  const float* const* param_ptrs = params.ptrs;
  ASSERT_TRUE(bn.Reserve(batch).ok());
  std::vector<float> y(x.size());
  const auto f = [&]() {
    bn.Forward(param_ptrs, x.data(), y.data(), batch, /*training=*/true);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += double{y[i]} * r[i];
    return sum;
  };
  f();
  std::vector<std::vector<float>> grads(4, std::vector<float>(bn.channels(), 123.0f));
  float* grad_ptrs[] = {grads[0].data(), grads[1].data(), grads[2].data(), grads[3].data()};
  std::vector<float> dx(x.size(), 123.0f);
  bn.Backward(param_ptrs, x.data(), y.data(), r.data(), grad_ptrs, dx.data(), batch);

  ExpectGradientsMatch(dx, x.data(), f, "dx");
  ExpectGradientsMatch(grads[0], params.gamma.data(), f, "gamma");
  ExpectGradientsMatch(grads[1], params.beta.data(), f, "beta");
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
// every buffer in `kernels`' memory: y, dx, the four variables' gradient
// slots, y_inference.
std::vector<std::vector<float>> RunOn(Kernels& kernels) {
  const int64_t batch = 3;
  BatchNorm bn("bn", InputShape({2, 3, 4}), kernels);
  std::mt19937 rng(4);
  const int64_t n = batch * bn.in_dim(), c = bn.channels();
  std::vector<std::vector<float>> host = {
      RandomVector(n, -1, 1, &rng), RandomVector(n, -1, 1, &rng), RandomVector(c, -1, 1, &rng),
      RandomVector(c, -1, 1, &rng), {0.1f, 0.2f, 0.3f, 0.4f},     {1, 2, 3, 4},
      std::vector<float>(n),        std::vector<float>(n),        std::vector<float>(c),
      std::vector<float>(c),        std::vector<float>(c),        std::vector<float>(c)};
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (const std::vector<float>& h : host) {
    buffers.push_back(std::move(kernels.Allocate(h.size() * sizeof(float))).value());
    kernels.CopyToDevice(h.data(), buffers.back()->data(), h.size() * sizeof(float));
  }
  float *x = buffers[0]->f32(), *dy = buffers[1]->f32(), *y = buffers[6]->f32(),
        *dx = buffers[7]->f32();
  const float* params[] = {buffers[2]->f32(), buffers[3]->f32(), buffers[4]->f32(),
                           buffers[5]->f32()};
  float* grads[] = {buffers[8]->f32(), buffers[9]->f32(), buffers[10]->f32(), buffers[11]->f32()};
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
  for (float* g : grads) read(g, c);
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
  const Params params = ScaleAndOffset({1, 1}, {0, 0});
  std::vector<float> y(kX.size());
  EXPECT_DEATH(bn.Forward(params.ptrs, kX.data(), y.data(), 4, true), "Reserve");
}

}  // namespace
}  // namespace pst
