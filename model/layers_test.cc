// Each layer's backward pass against central finite differences of its
// forward pass. The scalar checked is sum(y .* r) for a fixed random r (so
// dy = r), accumulated in double; the step is eps = 1e-2, where float
// rounding and the O(eps^2) truncation error both stay near 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "model/activations.h"
#include "model/dense.h"
#include "model/softmax_cross_entropy.h"

namespace pst {
namespace {

constexpr float kEps = 1e-2f;
constexpr double kRelTol = 1e-3;
constexpr double kAbsTol = 1e-4;

std::vector<float> RandomVector(int64_t n, float lo, float hi,
                                std::mt19937* rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(*rng);
  return v;
}

// d f / d *v by central differences; *v is restored.
double NumericalDerivative(float* v, const std::function<double()>& f) {
  const float saved = *v;
  *v = saved + kEps;
  const float hi = *v;
  const double f_hi = f();
  *v = saved - kEps;
  const float lo = *v;
  const double f_lo = f();
  *v = saved;
  // The float step actually taken, not 2 * kEps.
  return (f_hi - f_lo) / (double{hi} - double{lo});
}

void ExpectGradientsMatch(const std::vector<float>& analytic, float* values,
                          const std::function<double()>& f,
                          const std::string& what) {
  for (size_t i = 0; i < analytic.size(); ++i) {
    const double numeric = NumericalDerivative(&values[i], f);
    EXPECT_NEAR(analytic[i], numeric, kAbsTol + kRelTol * std::abs(numeric))
        << what << "[" << i << "]";
  }
}

// Checks d sum(y .* r) / d x and / d each variable of `layer`, for x drawn
// from [x_lo, x_hi] with |x| >= x_min_abs.
void CheckLayerGradients(Layer& layer, int64_t batch, float x_lo, float x_hi,
                         float x_min_abs = 0) {
  std::mt19937 rng(7);
  std::vector<float> x = RandomVector(batch * layer.in_dim(), x_lo, x_hi, &rng);
  for (float& v : x) {
    if (std::abs(v) < x_min_abs) v = v < 0 ? -x_min_abs : x_min_abs;
  }
  const std::vector<float> r =
      RandomVector(batch * layer.out_dim(), -1, 1, &rng);

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
    layer.Forward(param_ptrs.data(), x.data(), y.data(), batch);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += double{y[i]} * r[i];
    return sum;
  };
  f();
  std::vector<float> dx(x.size(), 123.0f);
  layer.Backward(param_ptrs.data(), x.data(), y.data(), r.data(),
                 grad_ptrs.data(), dx.data(), batch);

  ExpectGradientsMatch(dx, x.data(), f, "dx");
  for (size_t k = 0; k < specs.size(); ++k) {
    ExpectGradientsMatch(grads[k], params[k].data(), f, specs[k].name);
  }

  // A null dx skips the input gradient and leaves the others unchanged.
  std::vector<std::vector<float>> again = grads;
  for (size_t k = 0; k < specs.size(); ++k) grad_ptrs[k] = again[k].data();
  layer.Backward(param_ptrs.data(), x.data(), y.data(), r.data(),
                 grad_ptrs.data(), nullptr, batch);
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
  CheckLayerGradients(dense, /*batch=*/3, -1, 1);
}

TEST(SigmoidTest, GradientMatchesFiniteDifferences) {
  CpuKernels kernels;
  Sigmoid sigmoid(6, kernels);
  EXPECT_TRUE(sigmoid.Variables().empty());
  CheckLayerGradients(sigmoid, /*batch=*/3, -4, 4);
}

TEST(ReluTest, GradientMatchesFiniteDifferencesAwayFromZero) {
  CpuKernels kernels;
  Relu relu(6, kernels);
  EXPECT_TRUE(relu.Variables().empty());
  // |x| >= 0.1 > kEps: no step crosses the kink.
  CheckLayerGradients(relu, /*batch=*/3, -1, 1, /*x_min_abs=*/0.1f);
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
      [&]() {
        return double{loss.Loss(logits.data(), labels.data(), nullptr, batch)};
      },
      "dlogits");
}

TEST(SoftmaxCrossEntropyTest, CountsCorrectArgmax) {
  CpuKernels kernels;
  SoftmaxCrossEntropy loss(3, kernels);
  const std::vector<float> logits = {0, 1, 0, 5, 1, 2};
  EXPECT_EQ(
      loss.CountCorrect(logits.data(), std::vector<int32_t>{1, 0}.data(), 2),
      2);
  EXPECT_EQ(
      loss.CountCorrect(logits.data(), std::vector<int32_t>{1, 2}.data(), 2),
      1);
}

}  // namespace
}  // namespace pst
