// Each layer's backward pass against central finite differences of its
// forward pass. The scalar checked is sum(y .* r) for a fixed random r (so
// dy = r), accumulated in double; the step is eps = 1e-2, where float
// rounding and the O(eps^2) truncation error both stay near 1e-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/test_util.h"
#include "model/fake_device_kernels.h"
#include "model/layers/activations.h"
#include "model/layers/conv2d.h"
#include "model/layers/dense.h"
#include "model/layers/dropout.h"
#include "model/layers/max_pool.h"
#include "model/layers/softmax_cross_entropy.h"
#include "model/model_test_util.h"

namespace pst {
namespace {

std::vector<float> RandomVector(int64_t n, float lo, float hi, std::mt19937* rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(*rng);
  return v;
}

// n inputs drawn from [lo, hi] with |x| >= min_abs.
std::vector<float> RandomInput(int64_t n, float lo, float hi, float min_abs = 0) {
  std::mt19937 rng(7);
  std::vector<float> x = RandomVector(n, lo, hi, &rng);
  for (float& v : x) {
    if (std::abs(v) < min_abs) v = v < 0 ? -min_abs : min_abs;
  }
  return x;
}

// Checks d sum(y .* r) / d x and / d each variable of `layer` at x, which
// holds `batch` rows of layer.in_dim().
void CheckLayerGradients(Layer& layer, int64_t batch, std::vector<float> x) {
  ASSERT_EQ(static_cast<int64_t>(x.size()), batch * layer.in_dim());
  ASSERT_TRUE(layer.Reserve(batch).ok());
  std::mt19937 rng(8);
  const std::vector<float> r = RandomVector(batch * layer.out_dim(), -1, 1, &rng);

  const std::vector<VariableSpec> specs = layer.Variables();
  std::vector<std::vector<float>> params, grads;
  std::vector<const float*> param_ptrs;
  std::vector<float*> grad_ptrs;
  for (const VariableSpec& spec : specs) {
    params.push_back(RandomVector(NumElements(spec.shape), -1, 1, &rng));
    grads.emplace_back(NumElements(spec.shape), 123.0f);
  }
  for (size_t k = 0; k < specs.size(); ++k) {
    param_ptrs.push_back(params[k].data());
    grad_ptrs.push_back(grads[k].data());
  }

  std::vector<float> y(batch * layer.out_dim());
  const auto f = [&]() {
    layer.Forward(param_ptrs.data(), x.data(), y.data(), batch,
                  /*training=*/true);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += double{y[i]} * r[i];
    return sum;
  };
  f();
  std::vector<float> dx(x.size(), 123.0f);
  layer.Backward(param_ptrs.data(), x.data(), y.data(), r.data(), grad_ptrs.data(), dx.data(),
                 batch);

  ExpectGradientsMatch(dx, x.data(), f, "dx");
  for (size_t k = 0; k < specs.size(); ++k) {
    ExpectGradientsMatch(grads[k], params[k].data(), f, specs[k].name);
  }

  // A null dx skips the input gradient and leaves the others unchanged.
  std::vector<std::vector<float>> again = grads;
  for (size_t k = 0; k < specs.size(); ++k) grad_ptrs[k] = again[k].data();
  layer.Backward(param_ptrs.data(), x.data(), y.data(), r.data(), grad_ptrs.data(), nullptr, batch);
  EXPECT_EQ(again, grads);
}

TEST(DenseTest, DeclaresWeightsThenBias) {
  CpuKernels kernels;
  Dense dense("dense3", 5, 4, kernels);
  const std::vector<VariableSpec> specs = dense.Variables();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "dense3/weights");
  EXPECT_EQ(specs[0].shape, (Shape{5, 4}));
  EXPECT_EQ(specs[0].initializer, Initializer::kGlorotUniform);
  EXPECT_EQ(specs[1].name, "dense3/bias");
  EXPECT_EQ(specs[1].shape, (Shape{4}));
  EXPECT_EQ(specs[1].initializer, Initializer::kZeros);
}

TEST(DenseTest, GradientsMatchFiniteDifferences) {
  CpuKernels kernels;
  Dense dense("dense0", 5, 4, kernels);
  CheckLayerGradients(dense, /*batch=*/3, RandomInput(3 * 5, -1, 1));
}

TEST(SigmoidTest, GradientMatchesFiniteDifferences) {
  CpuKernels kernels;
  Sigmoid sigmoid(6, kernels);
  EXPECT_TRUE(sigmoid.Variables().empty());
  CheckLayerGradients(sigmoid, /*batch=*/3, RandomInput(3 * 6, -4, 4));
}

TEST(ReluTest, GradientMatchesFiniteDifferencesAwayFromZero) {
  CpuKernels kernels;
  Relu relu(6, kernels);
  EXPECT_TRUE(relu.Variables().empty());
  // |x| >= 0.1 > kGradientCheckStep: no step crosses the kink.
  CheckLayerGradients(relu, /*batch=*/3, RandomInput(3 * 6, -1, 1, /*min_abs=*/0.1f));
}

TEST(Conv2DTest, DeclaresHwioWeightsThenBias) {
  CpuKernels kernels;
  Conv2D conv("conv1", ConvShape(12, 10, 20, 5, 3, 50), kernels);
  EXPECT_EQ(conv.in_dim(), 12 * 10 * 20);
  EXPECT_EQ(conv.out_dim(), 8 * 8 * 50);
  const std::vector<VariableSpec> specs = conv.Variables();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "conv1/weights");
  EXPECT_EQ(specs[0].shape, (Shape{5, 3, 20, 50}));
  EXPECT_EQ(specs[0].initializer, Initializer::kGlorotUniform);
  EXPECT_EQ(specs[1].name, "conv1/bias");
  EXPECT_EQ(specs[1].shape, (Shape{50}));
  EXPECT_EQ(specs[1].initializer, Initializer::kZeros);
}

TEST(Conv2DTest, GradientsMatchFiniteDifferences) {
  CpuKernels kernels;
  Conv2D valid("conv0", ConvShape(6, 5, 3, 3, 2, 4), kernels);
  CheckLayerGradients(valid, /*batch=*/2, RandomInput(2 * 6 * 5 * 3, -1, 1));
}

TEST(Conv2DTest, StridedPaddedGradientsMatchFiniteDifferences) {
  CpuKernels kernels;
  Conv2D conv("conv0",
              ConvShape(7, 6, 2, 3, 3, 3, /*stride=*/2,
                        /*padding=*/1),
              kernels);
  CheckLayerGradients(conv, /*batch=*/2, RandomInput(2 * 7 * 6 * 2, -1, 1));
}

TEST(MaxPool2x2Test, DimsDropAnOddRow) {
  CpuKernels kernels;
  MaxPool2x2 pool(5, 6, 3, kernels);
  EXPECT_TRUE(pool.Variables().empty());
  EXPECT_EQ(pool.in_dim(), 5 * 6 * 3);
  EXPECT_EQ(pool.out_dim(), 2 * 3 * 3);
}

TEST(MaxPool2x2Test, GradientMatchesFiniteDifferencesWithoutTies) {
  CpuKernels kernels;
  MaxPool2x2 pool(5, 6, 3, kernels);
  // Distinct values 0.05 apart: no step of kGradientCheckStep changes a
  // window's argmax.
  const int64_t n = 2 * pool.in_dim();
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = 0.05f * static_cast<float>(i - n / 2);
  std::shuffle(x.begin(), x.end(), std::mt19937(9));
  CheckLayerGradients(pool, /*batch=*/2, x);
}

TEST(DropoutTest, InferencePassesInputThrough) {
  CpuKernels kernels;
  Dropout dropout(100, 0.5, /*seed=*/1, kernels);
  EXPECT_TRUE(dropout.Variables().empty());
  ASSERT_TRUE(dropout.Reserve(3).ok());
  const std::vector<float> x = RandomInput(3 * 100, -1, 1);
  std::vector<float> y(x.size());
  dropout.Forward(nullptr, x.data(), y.data(), 3, /*training=*/false);
  EXPECT_EQ(y, x);
}

// Training: each element is dropped (0) or scaled by 1 / (1 - rate), about a
// `rate` fraction dropped, and the backward pass uses the same mask.
TEST(DropoutTest, TrainingDropsAndRescalesWithTheSameMaskInBackward) {
  CpuKernels kernels;
  const int64_t dim = 1000, batch = 10;
  const double rate = 0.3;
  Dropout dropout(dim, rate, /*seed=*/1, kernels);
  ASSERT_TRUE(dropout.Reserve(batch).ok());
  const float scale = static_cast<float>(1.0 / (1.0 - rate));
  const std::vector<float> x = RandomInput(batch * dim, -1, 1, 0.1f);
  const std::vector<float> dy = RandomInput(batch * dim, -1, 1);
  std::vector<float> y(x.size()), dx(x.size());
  dropout.Forward(nullptr, x.data(), y.data(), batch, /*training=*/true);
  dropout.Backward(nullptr, x.data(), y.data(), dy.data(), nullptr, dx.data(), batch);
  int64_t dropped = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (y[i] == 0.0f) {
      ++dropped;
      EXPECT_EQ(dx[i], 0.0f) << i;
    } else {
      EXPECT_EQ(y[i], x[i] * scale) << i;
      EXPECT_EQ(dx[i], dy[i] * scale) << i;
    }
  }
  // 10000 draws: the standard deviation of the fraction is about 0.005.
  EXPECT_NEAR(static_cast<double>(dropped) / x.size(), rate, 0.025);
}

TEST(DropoutTest, MasksChangePerStepAndFollowTheSeed) {
  CpuKernels kernels;
  const int64_t dim = 64;
  Dropout a(dim, 0.5, /*seed=*/7, kernels), b(dim, 0.5, /*seed=*/7, kernels);
  ASSERT_TRUE(a.Reserve(1).ok());
  ASSERT_TRUE(b.Reserve(1).ok());
  const std::vector<float> x(dim, 1.0f);
  std::vector<float> a1(dim), a2(dim), b1(dim);
  a.Forward(nullptr, x.data(), a1.data(), 1, /*training=*/true);
  a.Forward(nullptr, x.data(), a2.data(), 1, /*training=*/true);
  b.Forward(nullptr, x.data(), b1.data(), 1, /*training=*/true);
  EXPECT_NE(a1, a2);
  EXPECT_EQ(a1, b1);
}

TEST(DropoutTest, RateZeroKeepsEverything) {
  CpuKernels kernels;
  Dropout dropout(50, 0.0, /*seed=*/1, kernels);
  ASSERT_TRUE(dropout.Reserve(1).ok());
  const std::vector<float> x = RandomInput(50, -1, 1);
  std::vector<float> y(x.size());
  dropout.Forward(nullptr, x.data(), y.data(), 1, /*training=*/true);
  EXPECT_EQ(y, x);
}

TEST(SoftmaxCrossEntropyTest, GradientMatchesFiniteDifferences) {
  CpuKernels kernels;
  const int64_t batch = 4, classes = 5;
  SoftmaxCrossEntropy loss(classes, kernels);
  std::mt19937 rng(3);
  std::vector<float> logits = RandomVector(batch * classes, -3, 3, &rng);
  const std::vector<int32_t> labels = {0, 4, 2, 2};

  std::vector<float> dlogits(logits.size());
  loss.Loss(logits.data(), labels.data(), dlogits.data(), batch);
  ExpectGradientsMatch(
      dlogits, logits.data(),
      [&]() { return double{loss.Loss(logits.data(), labels.data(), nullptr, batch)}; }, "dlogits");
}

TEST(SoftmaxCrossEntropyTest, CountsCorrectArgmax) {
  CpuKernels kernels;
  SoftmaxCrossEntropy loss(3, kernels);
  const std::vector<float> logits = {0, 1, 0, 5, 1, 2};
  EXPECT_EQ(loss.CountCorrect(logits.data(), std::vector<int32_t>{1, 0}.data(), 2), 2);
  EXPECT_EQ(loss.CountCorrect(logits.data(), std::vector<int32_t>{1, 2}.data(), 2), 1);
}

TEST(LayerTest, Describe) {
  CpuKernels kernels;
  EXPECT_EQ(Dense("dense1", 800, 500, kernels).Describe(), "dense1 (Dense 800->500)");
  EXPECT_EQ(Conv2D("conv0", ConvShape(28, 28, 1, 5, 5, 20), kernels).Describe(),
            "conv0 (Conv2D 5x5x1->20)");
  EXPECT_EQ(Conv2D("conv2", ConvShape(7, 6, 2, 3, 3, 3, 2, 1), kernels).Describe(),
            "conv2 (Conv2D 3x3x2->3, stride 2, padding 1)");
  EXPECT_EQ(Relu(11520, kernels).Describe(), "relu (11520)");
  EXPECT_EQ(Sigmoid(100, kernels).Describe(), "sigmoid (100)");
  EXPECT_EQ(MaxPool2x2(24, 24, 20, kernels).Describe(), "max_pool (2x2, 24x24x20->12x12x20)");
  EXPECT_EQ(Dropout(100, 0.5, 1, kernels).Describe(), "dropout (rate 0.5, 100)");
}

// What one training Forward and Backward of a layer produce.
struct LayerRun {
  std::vector<float> y, y_inference, dx;
  std::vector<std::vector<float>> grads;
};

// Host values into a new buffer of `kernels`.
std::unique_ptr<DeviceBuffer> ToDevice(Kernels& kernels, const std::vector<float>& host) {
  std::unique_ptr<DeviceBuffer> buffer =
      std::move(kernels.Allocate(host.size() * sizeof(float))).value();
  kernels.CopyToDevice(host.data(), buffer->data(), host.size() * sizeof(float));
  return buffer;
}

std::vector<float> ToHost(Kernels& kernels, DeviceBuffer& buffer, size_t n) {
  std::vector<float> host(n);
  kernels.CopyToHost(buffer.data(), host.data(), n * sizeof(float));
  return host;
}

// Runs the layer that `make` builds on `kernels` with every buffer in the
// kernels' memory: a training Forward (twice, so that dropout draws a second
// mask), Backward, then an inference Forward.
LayerRun RunOn(Kernels& kernels, const std::function<std::unique_ptr<Layer>(Kernels&)>& make,
               int64_t batch) {
  std::unique_ptr<Layer> layer = make(kernels);
  std::mt19937 rng(4);
  const int64_t in = batch * layer->in_dim(), out = batch * layer->out_dim();
  auto x = ToDevice(kernels, RandomVector(in, -1, 1, &rng));
  auto dy = ToDevice(kernels, RandomVector(out, -1, 1, &rng));
  auto y = ToDevice(kernels, std::vector<float>(out));
  auto dx = ToDevice(kernels, std::vector<float>(in));
  std::vector<std::unique_ptr<DeviceBuffer>> params, grads;
  std::vector<const float*> param_ptrs;
  std::vector<float*> grad_ptrs;
  for (const VariableSpec& spec : layer->Variables()) {
    const int64_t n = NumElements(spec.shape);
    params.push_back(ToDevice(kernels, RandomVector(n, -1, 1, &rng)));
    grads.push_back(ToDevice(kernels, std::vector<float>(n)));
    param_ptrs.push_back(params.back()->f32());
    grad_ptrs.push_back(grads.back()->f32());
  }
  LayerRun run;
  EXPECT_TRUE(layer->Reserve(batch).ok());
  for (int i = 0; i < 2; ++i) {
    layer->Forward(param_ptrs.data(), x->f32(), y->f32(), batch, true);
  }
  layer->Backward(param_ptrs.data(), x->f32(), y->f32(), dy->f32(), grad_ptrs.data(), dx->f32(),
                  batch);
  run.y = ToHost(kernels, *y, out);
  run.dx = ToHost(kernels, *dx, in);
  for (size_t k = 0; k < grads.size(); ++k) {
    run.grads.push_back(ToHost(kernels, *grads[k], NumElements(layer->Variables()[k].shape)));
  }
  layer->Forward(param_ptrs.data(), x->f32(), y->f32(), batch, false);
  run.y_inference = ToHost(kernels, *y, out);
  EXPECT_TRUE(kernels.TakeError().ok());
  return run;
}

// Every layer on a device back end (the fake checks that each pointer the
// layer passes is device memory) computes exactly what it does on the CPU.
TEST(LayerTest, DeviceBackEndMatchesCpuExactly) {
  using Make = std::function<std::unique_ptr<Layer>(Kernels&)>;
  const std::vector<std::pair<const char*, Make>> layers = {
      {"dense", [](Kernels& k) { return std::make_unique<Dense>("d", 7, 5, k); }},
      {"sigmoid", [](Kernels& k) { return std::make_unique<Sigmoid>(9, k); }},
      {"relu", [](Kernels& k) { return std::make_unique<Relu>(9, k); }},
      {"conv2d",
       [](Kernels& k) {
         return std::make_unique<Conv2D>("c", ConvShape(7, 6, 2, 3, 3, 3, 2, 1), k);
       }},
      {"max_pool", [](Kernels& k) { return std::make_unique<MaxPool2x2>(5, 6, 3, k); }},
      {"dropout", [](Kernels& k) { return std::make_unique<Dropout>(50, 0.4, 3, k); }},
  };
  for (const auto& [name, make] : layers) {
    SCOPED_TRACE(name);
    CpuKernels cpu;
    FakeDeviceKernels device;
    const LayerRun want = RunOn(cpu, make, /*batch=*/3);
    const LayerRun got = RunOn(device, make, /*batch=*/3);
    EXPECT_EQ(got.y, want.y);
    EXPECT_EQ(got.y_inference, want.y_inference);
    EXPECT_EQ(got.dx, want.dx);
    EXPECT_EQ(got.grads, want.grads);
  }
}

TEST(LayerTest, ForwardBeyondReserveIsABrokenInvariant) {
  CpuKernels kernels;
  MaxPool2x2 pool(4, 4, 1, kernels);
  ASSERT_TRUE(pool.Reserve(1).ok());
  std::vector<float> x(2 * 16), y(2 * 4);
  EXPECT_DEATH(pool.Forward(nullptr, x.data(), y.data(), 2, true), "Reserve");
}

}  // namespace
}  // namespace pst
