// OnednnKernels against CpuKernels, its reference, on the same random
// inputs: each kernel it implements with oneDNN, at several shapes (odd
// sizes, strides, padding), on one and two threads; plus its plan cache and
// how MakeKernels chooses it.
#include "kernels/onednn_kernels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/test_util.h"

namespace pst {
namespace {

// As in the GPU back end's test: each side stays within about 1e-6
// (normwise) of the exact result at these sizes, float32 sums in different
// orders.
constexpr double kGemmTol = 1e-5;

std::vector<double> ToDouble(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Normwise relative difference of `got` from CpuKernels' `want`.
double Diff(const std::vector<float>& got, const std::vector<float>& want) {
  return NormwiseRelError(got, ToDouble(want));
}

struct GemmCase {
  int64_t batch, in, out;
  int threads;
};

void PrintTo(const GemmCase& c, std::ostream* os) {
  *os << c.batch << "x" << c.in << "x" << c.out << " on " << c.threads << " threads";
}

class OnednnMatmulTest : public ::testing::TestWithParam<GemmCase> {
 protected:
  OnednnMatmulTest() : onednn_(GetParam().threads) {}
  CpuKernels eigen_;
  OnednnKernels onednn_;
};

TEST_P(OnednnMatmulTest, MatchesEigen) {
  const auto [B, IN, OUT, threads] = GetParam();
  const auto x = RandomVector(B * IN, -1, 1, 1);
  const auto w = RandomVector(IN * OUT, -1, 1, 2);
  const auto b = RandomVector(OUT, -1, 1, 3);
  const auto dy = RandomVector(B * OUT, -1, 1, 4);
  // Outputs start as garbage: the kernels overwrite, never accumulate.
  std::vector<float> y(B * OUT, 123.0f), dx(B * IN, 123.0f), dw(IN * OUT, 123.0f);
  std::vector<float> want_y = y, want_dx = dx, want_dw = dw;
  // Twice: the second call reuses the cached plan.
  for (int round = 0; round < 2; ++round) {
    onednn_.MatmulForward(x.data(), w.data(), b.data(), y.data(), B, IN, OUT);
    onednn_.MatmulBackwardInput(dy.data(), w.data(), dx.data(), B, IN, OUT);
    onednn_.MatmulBackwardWeights(x.data(), dy.data(), dw.data(), B, IN, OUT);
  }
  eigen_.MatmulForward(x.data(), w.data(), b.data(), want_y.data(), B, IN, OUT);
  eigen_.MatmulBackwardInput(dy.data(), w.data(), want_dx.data(), B, IN, OUT);
  eigen_.MatmulBackwardWeights(x.data(), dy.data(), want_dw.data(), B, IN, OUT);
  EXPECT_LT(Diff(y, want_y), kGemmTol);
  EXPECT_LT(Diff(dx, want_dx), kGemmTol);
  EXPECT_LT(Diff(dw, want_dw), kGemmTol);
}

INSTANTIATE_TEST_SUITE_P(Shapes, OnednnMatmulTest,
                         ::testing::Values(GemmCase{1, 1, 1, 1}, GemmCase{37, 129, 33, 1},
                                           GemmCase{64, 784, 256, 1}, GemmCase{3, 5, 2048, 1},
                                           GemmCase{100, 800, 500, 1}, GemmCase{37, 129, 33, 2},
                                           GemmCase{100, 800, 500, 2}));

struct ConvCase {
  const char* name;
  int64_t batch;
  Conv2DShape shape;
  int threads = 1;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

class OnednnConvTest : public ::testing::TestWithParam<ConvCase> {
 protected:
  OnednnConvTest() : onednn_(GetParam().threads) {}
  CpuKernels eigen_;
  OnednnKernels onednn_;
};

TEST_P(OnednnConvTest, MatchesEigen) {
  const Conv2DShape& g = GetParam().shape;
  const int64_t B = GetParam().batch;
  const int64_t x_size = B * g.height * g.width * g.in_channels;
  const int64_t w_size = g.filter_height * g.filter_width * g.in_channels * g.out_channels;
  const int64_t y_size = B * g.out_height() * g.out_width() * g.out_channels;
  const auto x = RandomVector(x_size, -1, 1, 5);
  const auto w = RandomVector(w_size, -1, 1, 6);
  const auto b = RandomVector(g.out_channels, -1, 1, 7);
  const auto dy = RandomVector(y_size, -1, 1, 8);
  std::vector<float> y(y_size, 123.0f), dx(x_size, 123.0f), dw(w_size, 123.0f);
  std::vector<float> want_y = y, want_dx = dx, want_dw = dw;
  for (int round = 0; round < 2; ++round) {
    onednn_.Conv2DForward(x.data(), w.data(), b.data(), y.data(), g, B);
    onednn_.Conv2DBackwardInput(dy.data(), w.data(), dx.data(), g, B);
    onednn_.Conv2DBackwardWeights(x.data(), dy.data(), dw.data(), g, B);
  }
  eigen_.Conv2DForward(x.data(), w.data(), b.data(), want_y.data(), g, B);
  eigen_.Conv2DBackwardInput(dy.data(), w.data(), want_dx.data(), g, B);
  eigen_.Conv2DBackwardWeights(x.data(), dy.data(), want_dw.data(), g, B);
  EXPECT_LT(Diff(y, want_y), kGemmTol);
  EXPECT_LT(Diff(dx, want_dx), kGemmTol);
  EXPECT_LT(Diff(dw, want_dw), kGemmTol);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OnednnConvTest,
    ::testing::Values(ConvCase{"lenet_conv0", 3, ConvShape(28, 28, 1, 5, 5, 20, 1, 0)},
                      ConvCase{"lenet_conv1", 3, ConvShape(12, 12, 20, 5, 5, 50, 1, 0)},
                      ConvCase{"lenet_conv1_2threads", 5, ConvShape(12, 12, 20, 5, 5, 50, 1, 0), 2},
                      ConvCase{"one_pixel", 1, ConvShape(1, 1, 1, 1, 1, 1, 1, 0)},
                      ConvCase{"filter_is_image", 2, ConvShape(4, 3, 2, 4, 3, 5, 1, 0)},
                      ConvCase{"pointwise", 2, ConvShape(5, 6, 7, 1, 1, 3, 1, 0)},
                      ConvCase{"same_padding", 2, ConvShape(7, 9, 3, 3, 3, 4, 1, 1)},
                      ConvCase{"stride2_pad1", 2, ConvShape(9, 8, 3, 3, 3, 4, 2, 1)},
                      ConvCase{"stride2_odd_channels", 3, ConvShape(11, 13, 5, 3, 3, 7, 2, 1), 2},
                      // Taller than wide filter, stride 3 leaving columns unread.
                      ConvCase{"stride3_rect", 2, ConvShape(10, 11, 2, 4, 2, 3, 3, 0)},
                      // Padding wider than the filter: some output pixels see only zeros.
                      ConvCase{"pad_exceeds_filter", 2, ConvShape(3, 4, 2, 2, 2, 3, 1, 3)}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

// Plans are cached per shape: a larger convolution, a smaller one, then the
// larger again (the shared scratchpad grown in between) give the same
// results, and a new batch size gets a plan of its own.
TEST(OnednnPlanCacheTest, AlternatingShapesGiveTheSameResults) {
  OnednnKernels kernels(1);
  const Conv2DShape big = ConvShape(12, 12, 20, 5, 5, 50, 1, 0);
  const Conv2DShape small = ConvShape(6, 6, 2, 3, 3, 4, 1, 1);
  const auto x = RandomVector(4 * 12 * 12 * 20, -1, 1, 9);
  const auto w = RandomVector(5 * 5 * 20 * 50, -1, 1, 10);
  const auto b = RandomVector(50, -1, 1, 11);
  std::vector<float> first(4 * 8 * 8 * 50), again(first.size()), small_y(6 * 6 * 4),
      batch1(8 * 8 * 50);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), first.data(), big, 4);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), small_y.data(), small, 1);
  kernels.MatmulForward(x.data(), w.data(), b.data(), small_y.data(), 3, 7, 5);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), batch1.data(), big, 1);
  kernels.Conv2DForward(x.data(), w.data(), b.data(), again.data(), big, 4);
  EXPECT_EQ(first, again);
  EXPECT_LT(Diff(batch1, std::vector<float>(first.begin(), first.begin() + batch1.size())),
            kGemmTol);
}

// A batch of no examples (a pipeline's empty micro-batch, an empty
// prediction batch): oneDNN cannot run it (SIGFPE in its work split); the
// passes write nothing, and the weight gradients are zero, as Eigen's.
TEST(OnednnEmptyBatchTest, WeightGradientsAreZeroAndNothingElseIsWritten) {
  OnednnKernels kernels(1);
  const Conv2DShape conv = ConvShape(12, 12, 20, 5, 5, 50, 1, 0);
  const int64_t filters = 5 * 5 * 20 * 50;
  std::vector<float> in(filters, 1.0f), out(filters, 123.0f), dw(filters, 123.0f),
      conv_dw(filters, 123.0f);
  kernels.MatmulForward(in.data(), in.data(), in.data(), out.data(), 0, 7, 5);
  kernels.MatmulBackwardInput(in.data(), in.data(), out.data(), 0, 7, 5);
  kernels.MatmulBackwardWeights(in.data(), in.data(), dw.data(), 0, 7, 5);
  kernels.Conv2DForward(in.data(), in.data(), in.data(), out.data(), conv, 0);
  kernels.Conv2DBackwardInput(in.data(), in.data(), out.data(), conv, 0);
  kernels.Conv2DBackwardWeights(in.data(), in.data(), conv_dw.data(), conv, 0);
  EXPECT_EQ(out, std::vector<float>(filters, 123.0f));
  EXPECT_EQ(std::vector<float>(dw.begin(), dw.begin() + 7 * 5), std::vector<float>(7 * 5, 0.0f));
  EXPECT_EQ(dw[7 * 5], 123.0f);
  EXPECT_EQ(conv_dw, std::vector<float>(filters, 0.0f));
}

TEST(MakeCpuKernelsTest, ChoosesByKindAndChecksThreads) {
  // A build with oneDNN runs it by default.
  EXPECT_EQ(DefaultCpuKernels(), CpuKernelsKind::kOnednn);
  EXPECT_EQ(*ParseCpuKernels("auto"), CpuKernelsKind::kOnednn);
  KernelsOptions options;
  options.cpu_kernels = CpuKernelsKind::kOnednn;
  options.intra_op_threads = 2;
  auto onednn = MakeKernels("cpu", options);
  ASSERT_TRUE(onednn.ok()) << onednn.status().ToString();
  EXPECT_NE(dynamic_cast<OnednnKernels*>(onednn->get()), nullptr);
  EXPECT_EQ((*onednn)->device(), "cpu");

  options.cpu_kernels = CpuKernelsKind::kEigen;
  auto eigen = MakeKernels("cpu", options);
  ASSERT_TRUE(eigen.ok()) << eigen.status().ToString();
  EXPECT_EQ(dynamic_cast<OnednnKernels*>(eigen->get()), nullptr);

  options.intra_op_threads = 0;
  EXPECT_EQ(MakeKernels("cpu", options).status().code(), Code::kInvalidArgument);
}

TEST(CpuKernelsKindTest, NamesRoundTrip) {
  for (CpuKernelsKind kind : AvailableCpuKernels()) {
    auto parsed = ParseCpuKernels(CpuKernelsName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_EQ(ParseCpuKernels("mkl").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst
