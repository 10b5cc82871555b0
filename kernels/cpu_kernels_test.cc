// Each CPU kernel against a naive float64 reference on random inputs.
#include "kernels/cpu_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/test_util.h"

namespace pst {
namespace {

struct GemmShape {
  int64_t batch, in, out;
};

class MatmulTest : public ::testing::TestWithParam<GemmShape> {
 protected:
  CpuKernels kernels_;
};

TEST_P(MatmulTest, ForwardMatchesReference) {
  const auto [B, IN, OUT] = GetParam();
  auto x = RandomVector(B * IN, -1, 1, 1);
  auto w = RandomVector(IN * OUT, -1, 1, 2);
  auto b = RandomVector(OUT, -1, 1, 3);
  std::vector<float> y(B * OUT);
  kernels_.MatmulForward(x.data(), w.data(), b.data(), y.data(), B, IN, OUT);

  std::vector<double> want(B * OUT);
  for (int64_t i = 0; i < B; ++i) {
    for (int64_t j = 0; j < OUT; ++j) {
      double acc = b[j];
      for (int64_t k = 0; k < IN; ++k) acc += double{x[i * IN + k]} * w[k * OUT + j];
      want[i * OUT + j] = acc;
    }
  }
  EXPECT_LT(NormwiseRelError(y, want), 1e-5);
}

TEST_P(MatmulTest, BackwardInputMatchesReference) {
  const auto [B, IN, OUT] = GetParam();
  auto dy = RandomVector(B * OUT, -1, 1, 4);
  auto w = RandomVector(IN * OUT, -1, 1, 5);
  std::vector<float> dx(B * IN);
  kernels_.MatmulBackwardInput(dy.data(), w.data(), dx.data(), B, IN, OUT);

  std::vector<double> want(B * IN);
  for (int64_t i = 0; i < B; ++i) {
    for (int64_t k = 0; k < IN; ++k) {
      double acc = 0;
      for (int64_t j = 0; j < OUT; ++j) acc += double{dy[i * OUT + j]} * w[k * OUT + j];
      want[i * IN + k] = acc;
    }
  }
  EXPECT_LT(NormwiseRelError(dx, want), 1e-5);
}

TEST_P(MatmulTest, BackwardWeightsMatchesReference) {
  const auto [B, IN, OUT] = GetParam();
  auto x = RandomVector(B * IN, -1, 1, 6);
  auto dy = RandomVector(B * OUT, -1, 1, 7);
  std::vector<float> dw(IN * OUT, 123.0f);  // overwritten, not accumulated
  kernels_.MatmulBackwardWeights(x.data(), dy.data(), dw.data(), B, IN, OUT);

  std::vector<double> want(IN * OUT);
  for (int64_t k = 0; k < IN; ++k) {
    for (int64_t j = 0; j < OUT; ++j) {
      double acc = 0;
      for (int64_t i = 0; i < B; ++i) acc += double{x[i * IN + k]} * dy[i * OUT + j];
      want[k * OUT + j] = acc;
    }
  }
  EXPECT_LT(NormwiseRelError(dw, want), 1e-5);
}

TEST_P(MatmulTest, BiasBackwardMatchesReference) {
  const auto [B, IN, OUT] = GetParam();
  auto dy = RandomVector(B * OUT, -1, 1, 8);
  std::vector<float> db(OUT, 123.0f);
  kernels_.BiasBackward(dy.data(), db.data(), B, OUT);

  std::vector<double> want(OUT, 0.0);
  for (int64_t i = 0; i < B; ++i) {
    for (int64_t j = 0; j < OUT; ++j) want[j] += dy[i * OUT + j];
  }
  EXPECT_LT(NormwiseRelError(db, want), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatmulTest,
                         ::testing::Values(GemmShape{1, 1, 1}, GemmShape{37, 129, 33},
                                           GemmShape{64, 784, 256}, GemmShape{3, 5, 2048}));

TEST(CpuKernelsTest, SigmoidForwardAndBackward) {
  CpuKernels kernels;
  const int64_t n = 1001;
  auto x = RandomVector(n, -12, 12, 9);
  auto dy = RandomVector(n, -1, 1, 10);
  std::vector<float> y(n), dx(n);
  kernels.SigmoidForward(x.data(), y.data(), n);
  kernels.SigmoidBackward(y.data(), dy.data(), dx.data(), n);

  std::vector<double> want_y(n), want_dx(n);
  for (int64_t i = 0; i < n; ++i) {
    const double s = 1.0 / (1.0 + std::exp(-double{x[i]}));
    want_y[i] = s;
    // From the kernel's own float y: the backward is a function of y.
    want_dx[i] = double{dy[i]} * y[i] * (1.0 - y[i]);
  }
  EXPECT_LT(ElementwiseRelError(y, want_y), 1e-5);
  EXPECT_LT(ElementwiseRelError(dx, want_dx), 1e-5);
}

TEST(CpuKernelsTest, SigmoidSaturatesWithoutNan) {
  CpuKernels kernels;
  const std::vector<float> x = {-1000.0f, -88.0f, 0.0f, 88.0f, 1000.0f};
  std::vector<float> y(x.size());
  kernels.SigmoidForward(x.data(), y.data(), x.size());
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_GE(y[1], 0.0f);
  EXPECT_LT(y[1], 1e-37f);
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_EQ(y[3], 1.0f);
  EXPECT_EQ(y[4], 1.0f);
}

TEST(CpuKernelsTest, ReluForwardAndBackward) {
  CpuKernels kernels;
  const int64_t n = 1001;
  auto x = RandomVector(n, -1, 1, 11);
  x[0] = 0.0f;  // the subgradient at 0 is taken as 0
  auto dy = RandomVector(n, -1, 1, 12);
  std::vector<float> y(n), dx(n);
  kernels.ReluForward(x.data(), y.data(), n);
  kernels.ReluBackward(x.data(), dy.data(), dx.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f) << i;
    EXPECT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.0f) << i;
  }
}

TEST(CpuKernelsTest, MultiplyAndCopy) {
  CpuKernels kernels;
  const int64_t n = 1001;
  auto a = RandomVector(n, -1, 1, 17);
  auto b = RandomVector(n, -1, 1, 18);
  std::vector<float> product(n), copy(n);
  kernels.Multiply(a.data(), b.data(), product.data(), n);
  kernels.Copy(a.data(), copy.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(product[i], a[i] * b[i]) << i;  // one rounding: exact in float
  }
  EXPECT_EQ(copy, a);
}

TEST(CpuKernelsTest, ScaledSum) {
  CpuKernels kernels;
  const int64_t n = 1001;
  auto a = RandomVector(n, -1, 1, 19);
  auto b = RandomVector(n, -1, 1, 20);
  std::vector<float> y(n);
  kernels.ScaledSum(0.25f, a.data(), -3.0f, b.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(y[i], 0.25 * a[i] - 3.0 * b[i], 1e-6) << i;
  }
}

// The backward pass (float sums in blocks, dx in float) against float64 at
// a convolution's size: 36,864 rows of 20 channels.
TEST(CpuKernelsTest, BatchNormBackwardMatchesReference) {
  CpuKernels kernels;
  const int64_t R = 36864, C = 20;
  const double epsilon = 1e-3;
  const auto x = RandomVector(R * C, 4.0f, 7.0f, 22);
  const auto dy = RandomVector(R * C, -1, 1, 23);
  const auto gamma = RandomVector(C, 0.5f, 1.5f, 24);
  std::vector<float> mean(C), variance(C), dgamma(C), dbeta(C), dx(R * C);
  kernels.ColumnMoments(x.data(), mean.data(), variance.data(), R, C);
  kernels.BatchNormBackward(x.data(), dy.data(), mean.data(), variance.data(), gamma.data(),
                            epsilon, dgamma.data(), dbeta.data(), dx.data(), R, C);
  std::vector<double> want_dgamma(C), want_dbeta(C), want_dx(R * C), inv_std(C);
  for (int64_t c = 0; c < C; ++c) {
    inv_std[c] = 1.0 / std::sqrt(double{variance[c]} + epsilon);
    for (int64_t r = 0; r < R; ++r) {
      const int64_t i = r * C + c;
      want_dbeta[c] += dy[i];
      want_dgamma[c] += dy[i] * (x[i] - double{mean[c]}) * inv_std[c];
    }
    for (int64_t r = 0; r < R; ++r) {
      const int64_t i = r * C + c;
      const double xhat = (x[i] - double{mean[c]}) * inv_std[c];
      want_dx[i] = gamma[c] * inv_std[c] / R * (R * dy[i] - want_dbeta[c] - xhat * want_dgamma[c]);
    }
  }
  EXPECT_LT(NormwiseRelError(dbeta, want_dbeta), 1e-5);
  EXPECT_LT(NormwiseRelError(dgamma, want_dgamma), 1e-5);
  EXPECT_LT(NormwiseRelError(dx, want_dx), 1e-5);
}

// About `rate` of the elements dropped, the rest scaled; the same mask for
// the same seed, another for another seed.
TEST(CpuKernelsTest, DropoutMaskDropsTheRateAndFollowsTheSeed) {
  CpuKernels kernels;
  const int64_t n = 100000;
  const uint32_t threshold = 0.3 * (1 << 24);
  std::vector<float> mask(n), same(n), other(n);
  kernels.DropoutMask(42, threshold, 2.0f, mask.data(), n);
  kernels.DropoutMask(42, threshold, 2.0f, same.data(), n);
  kernels.DropoutMask(43, threshold, 2.0f, other.data(), n);
  const int64_t dropped = std::count(mask.begin(), mask.end(), 0.0f);
  EXPECT_EQ(dropped + std::count(mask.begin(), mask.end(), 2.0f), n);
  EXPECT_NEAR(static_cast<double>(dropped) / n, 0.3, 0.01);  // 7 standard deviations
  EXPECT_EQ(mask, same);
  EXPECT_NE(mask, other);
}

// Columns of mean 1e4 and standard deviation about 0.9: E[x^2] - mean^2
// in float would lose every digit of the variance.
TEST(CpuKernelsTest, ColumnMomentsSumAboutTheMean) {
  CpuKernels kernels;
  const int64_t rows = 1000, channels = 3;
  const auto x = RandomVector(rows * channels, 1e4f - 1.5f, 1e4f + 1.5f, 21);
  std::vector<float> mean(channels), variance(channels);
  kernels.ColumnMoments(x.data(), mean.data(), variance.data(), rows, channels);
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, squares = 0;
    for (int64_t r = 0; r < rows; ++r) sum += x[r * channels + c];
    const double m = sum / rows;
    for (int64_t r = 0; r < rows; ++r) squares += std::pow(x[r * channels + c] - m, 2);
    EXPECT_NEAR(mean[c], m, 1e-3) << c;
    EXPECT_NEAR(variance[c], squares / rows, 1e-6 * squares / rows) << c;
  }
}

// Float64 softmax cross-entropy: the mean loss and (softmax - onehot) / B.
double ReferenceSoftmaxCrossEntropy(const std::vector<float>& logits,
                                    const std::vector<int32_t>& labels, int64_t B, int64_t C,
                                    std::vector<double>* dlogits) {
  dlogits->assign(B * C, 0.0);
  double loss = 0;
  for (int64_t i = 0; i < B; ++i) {
    const float* z = &logits[i * C];
    const double max = *std::max_element(z, z + C);
    double sum = 0;
    for (int64_t j = 0; j < C; ++j) sum += std::exp(z[j] - max);
    const double lse = max + std::log(sum);
    loss += lse - z[labels[i]];
    for (int64_t j = 0; j < C; ++j) {
      (*dlogits)[i * C + j] = (std::exp(z[j] - lse) - (j == labels[i] ? 1.0 : 0.0)) / B;
    }
  }
  return loss / B;
}

TEST(CpuKernelsTest, SoftmaxCrossEntropyMatchesReference) {
  CpuKernels kernels;
  const int64_t B = 67, C = 10;
  auto logits = RandomVector(B * C, -8, 8, 13);
  auto labels = RandomLabels(B, C, 14);
  std::vector<float> dlogits(B * C);
  const float loss =
      kernels.SoftmaxCrossEntropy(logits.data(), labels.data(), dlogits.data(), B, C);
  std::vector<double> want_dlogits;
  const double want_loss = ReferenceSoftmaxCrossEntropy(logits, labels, B, C, &want_dlogits);
  EXPECT_LT(std::abs(loss - want_loss) / want_loss, 1e-5);
  EXPECT_LT(NormwiseRelError(dlogits, want_dlogits), 1e-5);

  // A null dlogits computes the loss alone.
  EXPECT_EQ(kernels.SoftmaxCrossEntropy(logits.data(), labels.data(), nullptr, B, C), loss);
}

TEST(CpuKernelsTest, SoftmaxCrossEntropyIsStableForLargeLogits) {
  CpuKernels kernels;
  const int64_t B = 2, C = 3;
  const std::vector<float> logits = {1000.0f, 0.0f, -1000.0f, -500.0f, 500.0f, 499.0f};
  const std::vector<int32_t> labels = {1, 1};
  std::vector<float> dlogits(B * C);
  const float loss =
      kernels.SoftmaxCrossEntropy(logits.data(), labels.data(), dlogits.data(), B, C);
  std::vector<double> want_dlogits;
  const double want_loss = ReferenceSoftmaxCrossEntropy(logits, labels, B, C, &want_dlogits);
  ASSERT_TRUE(std::isfinite(loss));
  EXPECT_LT(std::abs(loss - want_loss) / want_loss, 1e-5);
  EXPECT_LT(NormwiseRelError(dlogits, want_dlogits), 1e-5);
}

TEST(CpuKernelsTest, ArgmaxCorrectMatchesReference) {
  CpuKernels kernels;
  const int64_t B = 500, C = 10;
  auto logits = RandomVector(B * C, -1, 1, 15);
  auto labels = RandomLabels(B, C, 16);
  int64_t want = 0;
  for (int64_t i = 0; i < B; ++i) {
    const float* z = &logits[i * C];
    if (std::max_element(z, z + C) - z == labels[i]) ++want;
  }
  EXPECT_GT(want, 0);
  EXPECT_EQ(kernels.ArgmaxCorrect(logits.data(), labels.data(), B, C), want);
}

TEST(CpuKernelsTest, ArgmaxTakesTheFirstOfTiedLogits) {
  CpuKernels kernels;
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 3.0f, 3.0f, 0.0f};
  EXPECT_EQ(kernels.ArgmaxCorrect(logits.data(), std::vector<int32_t>{1, 0}.data(), 2, 3), 2);
  EXPECT_EQ(kernels.ArgmaxCorrect(logits.data(), std::vector<int32_t>{2, 1}.data(), 2, 3), 0);
}

TEST(MakeKernelsTest, CpuAndUnusableDevices) {
  auto cpu = MakeKernels("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ((*cpu)->device(), "cpu");

  // No GPU 99, whether or not CUDA is built (or a GPU present).
  auto gpu = MakeKernels("gpu:99");
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(gpu.status().message().find("gpu:99"), std::string::npos);

  for (const char* bad : {"", "tpu", "gpu", "gpu:", "gpu:x", "gpu:-1", "GPU:0"}) {
    auto k = MakeKernels(bad);
    ASSERT_FALSE(k.ok()) << bad;
    EXPECT_EQ(k.status().code(), Code::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace pst
