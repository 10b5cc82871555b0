// CpuKernels' convolution and max-pooling against naive float64 references
// on random inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/test_util.h"

namespace pst {
namespace {

// As for the GEMMs it lowers to: a float32 convolution sums R*S*C (forward,
// input gradient) or B*P*Q (weight gradient) products, and for the sizes
// here its normwise error stays below 1e-6.
constexpr double kConvTol = 1e-5;

struct ConvCase {
  const char* name;
  int64_t batch;
  Conv2DShape shape;
};

// Calls fn(n, p, q, r, s, c, k, x_index) for every product term of the
// convolution whose input pixel lies inside the image (not in the padding).
template <typename Fn>
void ForEachTerm(const Conv2DShape& g, int64_t batch, Fn fn) {
  const int64_t P = g.out_height(), Q = g.out_width();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q)
        for (int64_t r = 0; r < g.filter_height; ++r)
          for (int64_t s = 0; s < g.filter_width; ++s) {
            const int64_t h = p * g.stride + r - g.padding;
            const int64_t w = q * g.stride + s - g.padding;
            if (h < 0 || h >= g.height || w < 0 || w >= g.width) continue;
            for (int64_t c = 0; c < g.in_channels; ++c)
              for (int64_t k = 0; k < g.out_channels; ++k)
                fn(n, p, q, r, s, c, k, ((n * g.height + h) * g.width + w) * g.in_channels + c);
          }
}

// Names the case in failure messages instead of dumping its bytes.
void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

class ConvTest : public ::testing::TestWithParam<ConvCase> {
 protected:
  ConvTest()
      : g_(GetParam().shape),
        batch_(GetParam().batch),
        x_size_(batch_ * g_.height * g_.width * g_.in_channels),
        w_size_(g_.filter_height * g_.filter_width * g_.in_channels * g_.out_channels),
        y_size_(batch_ * g_.out_height() * g_.out_width() * g_.out_channels) {}

  int64_t YIndex(int64_t n, int64_t p, int64_t q, int64_t k) const {
    return ((n * g_.out_height() + p) * g_.out_width() + q) * g_.out_channels + k;
  }
  int64_t WIndex(int64_t r, int64_t s, int64_t c, int64_t k) const {
    return ((r * g_.filter_width + s) * g_.in_channels + c) * g_.out_channels + k;
  }

  CpuKernels kernels_;
  const Conv2DShape g_;
  const int64_t batch_, x_size_, w_size_, y_size_;
};

TEST_P(ConvTest, ForwardMatchesReference) {
  auto x = RandomVector(x_size_, -1, 1, 1);
  auto w = RandomVector(w_size_, -1, 1, 2);
  auto b = RandomVector(g_.out_channels, -1, 1, 3);
  std::vector<float> y(y_size_, 123.0f);
  kernels_.Conv2DForward(x.data(), w.data(), b.data(), y.data(), g_, batch_);

  std::vector<double> want(y_size_);
  for (int64_t i = 0; i < y_size_; ++i) want[i] = b[i % g_.out_channels];
  ForEachTerm(
      g_, batch_,
      [&](int64_t n, int64_t p, int64_t q, int64_t r, int64_t s, int64_t c, int64_t k, int64_t xi) {
        want[YIndex(n, p, q, k)] += double{x[xi]} * w[WIndex(r, s, c, k)];
      });
  EXPECT_LT(NormwiseRelError(y, want), kConvTol);
}

TEST_P(ConvTest, BackwardInputMatchesReference) {
  auto dy = RandomVector(y_size_, -1, 1, 4);
  auto w = RandomVector(w_size_, -1, 1, 5);
  std::vector<float> dx(x_size_, 123.0f);
  kernels_.Conv2DBackwardInput(dy.data(), w.data(), dx.data(), g_, batch_);

  std::vector<double> want(x_size_, 0.0);
  ForEachTerm(
      g_, batch_,
      [&](int64_t n, int64_t p, int64_t q, int64_t r, int64_t s, int64_t c, int64_t k, int64_t xi) {
        want[xi] += double{dy[YIndex(n, p, q, k)]} * w[WIndex(r, s, c, k)];
      });
  EXPECT_LT(NormwiseRelError(dx, want), kConvTol);
}

TEST_P(ConvTest, BackwardWeightsMatchesReference) {
  auto x = RandomVector(x_size_, -1, 1, 6);
  auto dy = RandomVector(y_size_, -1, 1, 7);
  std::vector<float> dw(w_size_, 123.0f);
  kernels_.Conv2DBackwardWeights(x.data(), dy.data(), dw.data(), g_, batch_);

  std::vector<double> want(w_size_, 0.0);
  ForEachTerm(
      g_, batch_,
      [&](int64_t n, int64_t p, int64_t q, int64_t r, int64_t s, int64_t c, int64_t k, int64_t xi) {
        want[WIndex(r, s, c, k)] += double{x[xi]} * dy[YIndex(n, p, q, k)];
      });
  EXPECT_LT(NormwiseRelError(dw, want), kConvTol);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTest,
                         ::testing::Values(
                             // LeNet's two convolutions (valid padding, stride 1).
                             ConvCase{"lenet_conv0", 3, ConvShape(28, 28, 1, 5, 5, 20, 1, 0)},
                             ConvCase{"lenet_conv1", 3, ConvShape(12, 12, 20, 5, 5, 50, 1, 0)},
                             ConvCase{"one_pixel", 1, ConvShape(1, 1, 1, 1, 1, 1, 1, 0)},
                             ConvCase{"filter_is_image", 2, ConvShape(4, 3, 2, 4, 3, 5, 1, 0)},
                             ConvCase{"pointwise", 2, ConvShape(5, 6, 7, 1, 1, 3, 1, 0)},
                             ConvCase{"same_padding", 2, ConvShape(7, 9, 3, 3, 3, 4, 1, 1)},
                             ConvCase{"stride2_pad1", 2, ConvShape(9, 8, 3, 3, 3, 4, 2, 1)},
                             // Taller than wide filter, stride 3 leaving columns unread.
                             ConvCase{"stride3_rect", 2, ConvShape(10, 11, 2, 4, 2, 3, 3, 0)},
                             // Padding wider than the filter: some output pixels see only zeros.
                             ConvCase{"pad_exceeds_filter", 2, ConvShape(3, 4, 2, 2, 2, 3, 1, 3)}),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(ConvShapeTest, OutputSize) {
  EXPECT_EQ(ConvShape(28, 28, 1, 5, 5, 20, 1, 0).out_height(), 24);
  EXPECT_EQ(ConvShape(12, 10, 20, 5, 3, 50, 1, 0).out_width(), 8);
  EXPECT_EQ(ConvShape(7, 9, 3, 3, 3, 4, 1, 1).out_width(), 9);
  EXPECT_EQ(ConvShape(9, 8, 3, 3, 3, 4, 2, 1).out_height(), 5);
  EXPECT_EQ(ConvShape(9, 8, 3, 3, 3, 4, 2, 1).out_width(), 4);
}

// A larger convolution, then a smaller one, then the larger again: the
// scratch buffer shrinking and growing must not change results.
TEST(ConvScratchTest, AlternatingSizesGiveTheSameResults) {
  CpuKernels kernels;
  const Conv2DShape big = ConvShape(12, 12, 20, 5, 5, 50, 1, 0);
  const Conv2DShape small = ConvShape(6, 6, 2, 3, 3, 4, 1, 1);
  auto x = RandomVector(4 * 12 * 12 * 20, -1, 1, 8);
  auto w = RandomVector(5 * 5 * 20 * 50, -1, 1, 9);
  auto b = RandomVector(50, -1, 1, 10);
  std::vector<float> first(4 * 8 * 8 * 50), again(first.size()), small_y(6 * 6 * 4);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), first.data(), big, 4);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), small_y.data(), small, 1);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), again.data(), big, 4);
  EXPECT_EQ(first, again);
}

struct PoolCase {
  int64_t batch, height, width, channels;
};

class MaxPoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(MaxPoolTest, ForwardAndBackwardMatchReference) {
  const auto [B, H, W, C] = GetParam();
  const int64_t out_h = H / 2, out_w = W / 2, y_size = B * out_h * out_w * C;
  CpuKernels kernels;
  auto x = RandomVector(B * H * W * C, -1, 1, 11);
  auto dy = RandomVector(y_size, -1, 1, 12);
  std::vector<float> y(y_size, 123.0f), dx(x.size(), 123.0f);
  std::vector<int32_t> argmax(y_size, -1);
  kernels.MaxPool2x2Forward(x.data(), y.data(), argmax.data(), B, H, W, C);
  kernels.MaxPool2x2Backward(dy.data(), argmax.data(), dx.data(), B, H, W, C);

  std::vector<float> want_dx(x.size(), 0.0f);
  for (int64_t n = 0; n < B; ++n)
    for (int64_t i = 0; i < out_h; ++i)
      for (int64_t j = 0; j < out_w; ++j)
        for (int64_t c = 0; c < C; ++c) {
          int64_t best = -1;
          for (int64_t di = 0; di < 2; ++di)
            for (int64_t dj = 0; dj < 2; ++dj) {
              const int64_t xi = ((n * H + 2 * i + di) * W + 2 * j + dj) * C + c;
              if (best < 0 || x[xi] > x[best]) best = xi;
            }
          const int64_t yi = ((n * out_h + i) * out_w + j) * C + c;
          // The max is one of the inputs: exact equality.
          ASSERT_EQ(y[yi], x[best]) << yi;
          ASSERT_EQ(argmax[yi], best) << yi;
          want_dx[best] = dy[yi];
        }
  // Zero off the argmax positions, including a dropped odd row or column.
  EXPECT_EQ(dx, want_dx);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MaxPoolTest,
                         ::testing::Values(PoolCase{3, 24, 24, 20}, PoolCase{3, 8, 8, 50},
                                           PoolCase{2, 2, 2, 1}, PoolCase{2, 5, 7, 3}));

TEST(MaxPoolTest, TiesGoToTheFirstInRowMajorOrder) {
  CpuKernels kernels;
  // One 2x2 image, 2 channels: channel 0 ties at (0,1) and (1,0), channel 1
  // is constant.
  const std::vector<float> x = {0, 5, 3, 5, 3, 5, 1, 5};
  std::vector<float> y(2);
  std::vector<int32_t> argmax(2);
  kernels.MaxPool2x2Forward(x.data(), y.data(), argmax.data(), 1, 2, 2, 2);
  EXPECT_EQ(y, (std::vector<float>{3, 5}));
  EXPECT_EQ(argmax, (std::vector<int32_t>{2, 1}));
}

}  // namespace
}  // namespace pst
