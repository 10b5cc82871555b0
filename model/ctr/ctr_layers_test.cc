// The click models' parts: FM's O(n dim) form against the sum over pairs,
// the dot interaction's order, and every part's gradients against central
// finite differences (the cross network's, full and low rank, and the Mlp's
// with batch norm too).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "model/ctr/cross_network.h"
#include "model/ctr/interactions.h"
#include "model/ctr/mlp.h"
#include "model/layers/initializer.h"

namespace pst {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// d(sum_k w_k out_k)/d(x_i) by central differences of `loss` at x.
void ExpectGradient(std::vector<float>* x, const std::vector<float>& analytic,
                    const std::function<double()>& loss, const std::string& what) {
  const float eps = 1e-2f;
  ASSERT_EQ(x->size(), analytic.size()) << what;
  for (size_t i = 0; i < x->size(); ++i) {
    const float saved = (*x)[i];
    (*x)[i] = saved + eps;
    const double hi = loss();
    (*x)[i] = saved - eps;
    const double lo = loss();
    (*x)[i] = saved;
    const double numeric = (hi - lo) / (2 * eps);
    EXPECT_NEAR(analytic[i], numeric, 2e-3 + 1e-2 * std::abs(numeric)) << what << " element " << i;
  }
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double{a[i]} * b[i];
  return s;
}

constexpr int64_t kBatch = 3, kVectors = 4, kDim = 5;

TEST(FmTest, EqualsTheSumOfPairwiseDotProducts) {
  const std::vector<float> v = Random(kBatch * kVectors * kDim, 1);
  std::vector<float> fm(kBatch), dots(kBatch * DotPairs(kVectors));
  FmForward(v.data(), kBatch, kVectors, kDim, fm.data());
  DotForward(v.data(), kBatch, kVectors, kDim, dots.data());
  for (int64_t b = 0; b < kBatch; ++b) {
    double pairs = 0;
    for (int64_t i = 0; i < kVectors; ++i) {
      for (int64_t j = i + 1; j < kVectors; ++j) {
        for (int64_t c = 0; c < kDim; ++c) {
          pairs += double{v[(b * kVectors + i) * kDim + c]} * v[(b * kVectors + j) * kDim + c];
        }
      }
    }
    EXPECT_NEAR(fm[b], pairs, 1e-4);
    double sum_of_dots = 0;
    for (int64_t p = 0; p < DotPairs(kVectors); ++p)
      sum_of_dots += dots[b * DotPairs(kVectors) + p];
    EXPECT_NEAR(sum_of_dots, pairs, 1e-4);
  }
  // (0,1) first, (0,2) next: example 0's vectors 0 and 2.
  double d02 = 0;
  for (int64_t c = 0; c < kDim; ++c) d02 += double{v[c]} * v[2 * kDim + c];
  EXPECT_NEAR(dots[1], d02, 1e-5);
}

TEST(FmTest, GradientMatchesFiniteDifferencesAndIsAdded) {
  std::vector<float> v = Random(kBatch * kVectors * kDim, 2);
  const std::vector<float> w = Random(kBatch, 3);  // the loss's weights per example
  const auto loss = [&] {
    std::vector<float> y(kBatch);
    FmForward(v.data(), kBatch, kVectors, kDim, y.data());
    return Dot(y, w);
  };
  std::vector<float> dv(v.size(), 1.0f);  // FmBackward adds to what is there
  FmBackward(v.data(), w.data(), kBatch, kVectors, kDim, dv.data());
  for (float& g : dv) g -= 1.0f;
  ExpectGradient(&v, dv, loss, "fm");
}

TEST(DotTest, GradientMatchesFiniteDifferences) {
  std::vector<float> v = Random(kBatch * kVectors * kDim, 4);
  const std::vector<float> w = Random(kBatch * DotPairs(kVectors), 5);
  const auto loss = [&] {
    std::vector<float> y(w.size());
    DotForward(v.data(), kBatch, kVectors, kDim, y.data());
    return Dot(y, w);
  };
  std::vector<float> dv(v.size(), 0.0f);
  DotBackward(v.data(), w.data(), kBatch, kVectors, kDim, dv.data());
  ExpectGradient(&v, dv, loss, "dot");
}

std::vector<std::vector<float>> InitialValues(const std::vector<VariableSpec>& specs) {
  std::vector<std::vector<float>> values;
  uint64_t seed = 11;
  for (const VariableSpec& spec : specs) {
    const Tensor t = InitializeVariable(spec, seed++);
    std::vector<float> v(t.f32(), t.f32() + t.num_elements());
    // Non-zero biases, so their paths are exercised too.
    if (spec.initializer == Initializer::kZeros) v = Random(t.num_elements(), seed++);
    values.push_back(v);
  }
  return values;
}

std::vector<const float*> Pointers(const std::vector<std::vector<float>>& values) {
  std::vector<const float*> p;
  for (const auto& v : values) p.push_back(v.data());
  return p;
}

void CheckCross(int64_t rank) {
  SCOPED_TRACE(rank == 0 ? "full rank" : "low rank");
  std::unique_ptr<Kernels> kernels = MakeKernels("cpu").value();
  const int64_t width = 6;
  CrossNetwork cross(width, 2, rank, *kernels);
  EXPECT_EQ(cross.variables().size(), rank == 0 ? 4u : 8u);
  std::vector<std::vector<float>> params = InitialValues(cross.variables());
  std::vector<float> x0 = Random(kBatch * width, 6);
  const std::vector<float> w = Random(kBatch * width, 7);
  const auto loss = [&] {
    const std::vector<const float*> p = Pointers(params);
    cross.Forward(p.data(), x0.data(), kBatch);
    return Dot(std::vector<float>(cross.output(), cross.output() + kBatch * width), w);
  };
  loss();
  std::vector<std::vector<float>> grads;
  std::vector<float*> grad_ptrs;
  for (const auto& v : params) grads.emplace_back(v.size());
  for (auto& g : grads) grad_ptrs.push_back(g.data());
  std::vector<float> dx0(x0.size());
  const std::vector<const float*> p = Pointers(params);
  cross.Backward(p.data(), x0.data(), w.data(), grad_ptrs.data(), dx0.data(), kBatch);
  ExpectGradient(&x0, dx0, loss, "x0");
  for (size_t k = 0; k < params.size(); ++k) {
    ExpectGradient(&params[k], grads[k], loss, cross.variables()[k].name);
  }
}

TEST(CrossNetworkTest, FullRankGradientsMatchFiniteDifferences) { CheckCross(0); }
TEST(CrossNetworkTest, LowRankGradientsMatchFiniteDifferences) { CheckCross(3); }

TEST(CrossNetworkTest, OneLayerIsX0TimesTheLinearMapPlusX0) {
  std::unique_ptr<Kernels> kernels = MakeKernels("cpu").value();
  CrossNetwork cross(2, 1, 0, *kernels);
  const std::vector<float> weights = {1, 2, 3, 4}, bias = {0.5f, -1};
  const std::vector<const float*> p = {weights.data(), bias.data()};
  const std::vector<float> x0 = {1, -2};
  cross.Forward(p.data(), x0.data(), 1);
  // W x0 + b with w (in, out): [1*1 + -2*3 + 0.5, 1*2 + -2*4 - 1] = [-4.5, -7].
  EXPECT_FLOAT_EQ(cross.output()[0], 1 * -4.5f + 1);
  EXPECT_FLOAT_EQ(cross.output()[1], -2 * -7.0f - 2);
}

TEST(MlpTest, GradientsMatchFiniteDifferencesWithBatchNorm) {
  std::unique_ptr<Kernels> kernels = MakeKernels("cpu").value();
  MlpOptions options;
  options.hidden = {4, 3};
  options.output = 1;
  options.batchnorm = true;
  Mlp mlp("top/", 5, options, 1, *kernels);
  EXPECT_EQ(mlp.variables().front().name, "top/dense0/weights");
  std::vector<std::vector<float>> params = InitialValues(mlp.variables());
  std::vector<float> x = Random(kBatch * 5, 8);
  const std::vector<float> w = Random(kBatch, 9);
  const auto loss = [&] {
    const std::vector<const float*> p = Pointers(params);
    mlp.Forward(p.data(), x.data(), kBatch, /*training=*/true);
    return Dot(std::vector<float>(mlp.output(), mlp.output() + kBatch), w);
  };
  loss();
  std::vector<std::vector<float>> grads;
  std::vector<float*> grad_ptrs;
  for (const auto& v : params) grads.emplace_back(v.size());
  for (auto& g : grads) grad_ptrs.push_back(g.data());
  std::vector<float> dx(x.size());
  const std::vector<const float*> p = Pointers(params);
  mlp.Backward(p.data(), x.data(), w.data(), grad_ptrs.data(), dx.data(), kBatch);
  ExpectGradient(&x, dx, loss, "x");
  for (size_t k = 0; k < params.size(); ++k) {
    if (mlp.variables()[k].moving_average) continue;  // deltas, not gradients
    ExpectGradient(&params[k], grads[k], loss, mlp.variables()[k].name);
  }
}

}  // namespace
}  // namespace pst
