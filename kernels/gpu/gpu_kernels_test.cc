// GpuKernels against CpuKernels, its reference, on the same random inputs:
// every method, with explicit tolerances; plus its memory cap, device
// selection and error reporting. The tests that need a GPU skip (never
// pass) without one.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/gpu/gpu_device.h"
#include "kernels/gpu/pinned_staging.h"
#include "kernels/kernels.h"
#include "kernels/test_util.h"

namespace pst {
namespace {

// Matrix products and convolutions: the GPU and the CPU each stay within
// about 1e-6 (normwise) of the exact result at these sizes, float32 sums
// in different orders.
constexpr double kGemmTol = 1e-5;
// exp, log and division: a few ulp apart on each side.
constexpr double kElementwiseTol = 1e-5;

std::vector<double> ToDouble(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Integers in [-2, 2] as floats: many ties, for the first-of-ties rules.
std::vector<float> TiedVector(int64_t n, uint32_t seed) {
  std::vector<float> v = RandomVector(n, -2.5f, 2.5f, seed);
  for (float& x : v) x = std::round(x);
  return v;
}

// The count is the devices MakeKernels can open: gpu:0 ... gpu:count-1 and
// not gpu:count.
TEST(GpuDeviceTest, DeviceCountIsTheDevicesThatOpen) {
  const int count = CudaDeviceCount();
  for (int i = 0; i < count; ++i) {
    auto made = MakeKernels("gpu:" + std::to_string(i));
    EXPECT_TRUE(made.ok()) << made.status().ToString();
  }
  auto beyond = MakeKernels("gpu:" + std::to_string(count));
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.status().code(), Code::kFailedPrecondition) << beyond.status().ToString();
}

TEST(MakeGpuKernelsTest, MissingGpuIsFailedPreconditionNamingIt) {
  // With or without a GPU (or CUDA driver) here.
  for (const char* device : {"gpu:99", "gpu:12345678901"}) {
    auto made = MakeKernels(device);
    ASSERT_FALSE(made.ok()) << device;
    EXPECT_EQ(made.status().code(), Code::kFailedPrecondition) << device;
    EXPECT_NE(made.status().message().find(std::string("device '") + device + "' is not usable"),
              std::string::npos)
        << made.status().message();
  }
}

TEST(MakeGpuKernelsTest, MemoryFractionOutsideZeroToOneIsInvalid) {
  for (double fraction : {0.0, -0.5, 1.5}) {
    KernelsOptions options;
    options.gpu_memory_fraction = fraction;
    EXPECT_EQ(MakeKernels("gpu:0", options).status().code(), Code::kInvalidArgument) << fraction;
  }
}

// gpu:0 beside a CpuKernels, and device buffers that live as long as the
// test.
class GpuKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA GPU: skipping";
    auto made = MakeKernels("gpu:0");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    gpu_ = std::move(made).value();
  }

  void TearDown() override {
    if (gpu_ == nullptr) return;
    const Status error = gpu_->TakeError();
    EXPECT_TRUE(error.ok()) << error.ToString();
  }

  // A device buffer of n elements of T, uninitialised.
  template <typename T>
  T* Make(int64_t n) {
    auto buffer = gpu_->Allocate(n * sizeof(T));
    CHECK(buffer.ok()) << buffer.status().ToString();
    buffers_.push_back(std::move(buffer).value());
    return static_cast<T*>(buffers_.back()->data());
  }

  // A device copy of `host`.
  template <typename T>
  T* Upload(const std::vector<T>& host) {
    T* device = Make<T>(host.size());
    gpu_->CopyToDevice(host.data(), device, host.size() * sizeof(T));
    return device;
  }

  // The first n elements at `device`.
  template <typename T>
  std::vector<T> Download(const T* device, int64_t n) {
    std::vector<T> host(n);
    gpu_->CopyToHost(device, host.data(), n * sizeof(T));
    return host;
  }

  CpuKernels cpu_;
  std::unique_ptr<Kernels> gpu_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
};

TEST_F(GpuKernelsTest, NamesItsDeviceAndIsNotHostMemory) {
  EXPECT_EQ(gpu_->device(), "gpu:0");
  EXPECT_FALSE(gpu_->host_memory());
}

TEST_F(GpuKernelsTest, CopiesRoundTrip) {
  // Copies go through 4 MiB pinned chunks (PinnedStaging::kChunkBytes):
  // sizes below, at and across chunk boundaries, in both halves.
  const int64_t chunk = PinnedStaging::kChunkBytes / sizeof(float);
  uint32_t seed = 1;
  for (int64_t n : {int64_t{1}, int64_t{1000}, chunk - 1, chunk, chunk + 1, 2 * chunk,
                    5 * chunk / 2, int64_t{3'000'000}}) {
    const std::vector<float> x = RandomVector(n, -1, 1, seed++);
    EXPECT_EQ(Download(Upload(x), x.size()), x) << n << " floats";
  }
}

TEST_F(GpuKernelsTest, UploadsMayBeReusedAtOnceAndArriveInOrder) {
  // CopyToDevice returns before its last chunk's DMA ends: the source must
  // have been read by then, and later work must see every upload.
  const int64_t n = 5 * PinnedStaging::kChunkBytes / sizeof(float) / 2;
  std::vector<float> a = RandomVector(n, -1, 1, 3), b = RandomVector(n, -1, 1, 4);
  const std::vector<float> a_sent = a, b_sent = b;
  float* device_a = Upload(a);
  std::fill(a.begin(), a.end(), 7.0f);
  float* device_b = Upload(b);
  std::fill(b.begin(), b.end(), 7.0f);
  // A kernel queued after both uploads reads a.
  float* relu = Make<float>(n);
  gpu_->ReluForward(device_a, relu, n);
  std::vector<float> relu_a(n);
  for (int64_t i = 0; i < n; ++i) relu_a[i] = std::max(a_sent[i], 0.0f);
  EXPECT_EQ(Download(relu, n), relu_a);
  EXPECT_EQ(Download(device_b, n), b_sent);
}

struct GemmShape {
  int64_t batch, in, out;
};

void PrintTo(const GemmShape& s, std::ostream* os) {
  *os << s.batch << "x" << s.in << "x" << s.out;
}

class GpuMatmulTest : public GpuKernelsTest, public ::testing::WithParamInterface<GemmShape> {};

TEST_P(GpuMatmulTest, MatchesCpu) {
  const auto [B, IN, OUT] = GetParam();
  const auto x = RandomVector(B * IN, -1, 1, 1);
  const auto w = RandomVector(IN * OUT, -1, 1, 2);
  const auto b = RandomVector(OUT, -1, 1, 3);
  const auto dy = RandomVector(B * OUT, -1, 1, 4);
  std::vector<float> y(B * OUT), dx(B * IN), dw(IN * OUT), db(OUT);
  cpu_.MatmulForward(x.data(), w.data(), b.data(), y.data(), B, IN, OUT);
  cpu_.MatmulBackwardInput(dy.data(), w.data(), dx.data(), B, IN, OUT);
  cpu_.MatmulBackwardWeights(x.data(), dy.data(), dw.data(), B, IN, OUT);
  cpu_.BiasBackward(dy.data(), db.data(), B, OUT);

  const float *gx = Upload(x), *gw = Upload(w), *gb = Upload(b), *gdy = Upload(dy);
  float *gy = Make<float>(B * OUT), *gdx = Make<float>(B * IN), *gdw = Make<float>(IN * OUT),
        *gdb = Make<float>(OUT);
  gpu_->MatmulForward(gx, gw, gb, gy, B, IN, OUT);
  gpu_->MatmulBackwardInput(gdy, gw, gdx, B, IN, OUT);
  gpu_->MatmulBackwardWeights(gx, gdy, gdw, B, IN, OUT);
  gpu_->BiasBackward(gdy, gdb, B, OUT);
  EXPECT_LT(NormwiseRelError(Download(gy, B * OUT), ToDouble(y)), kGemmTol);
  EXPECT_LT(NormwiseRelError(Download(gdx, B * IN), ToDouble(dx)), kGemmTol);
  EXPECT_LT(NormwiseRelError(Download(gdw, IN * OUT), ToDouble(dw)), kGemmTol);
  EXPECT_LT(NormwiseRelError(Download(gdb, OUT), ToDouble(db)), kGemmTol);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuMatmulTest,
                         ::testing::Values(GemmShape{1, 1, 1}, GemmShape{7, 13, 5},
                                           GemmShape{64, 784, 256}, GemmShape{33, 800, 500},
                                           GemmShape{300, 37, 65}));

TEST_F(GpuKernelsTest, BiasBackwardGrowsItsOnesVector) {
  // A small batch, then a larger one: the ones vector must grow with it.
  for (int64_t B : {3, 5000}) {
    const auto dy = RandomVector(B * 7, -1, 1, 5);
    std::vector<float> db(7);
    cpu_.BiasBackward(dy.data(), db.data(), B, 7);
    float* gdb = Make<float>(7);
    gpu_->BiasBackward(Upload(dy), gdb, B, 7);
    EXPECT_LT(NormwiseRelError(Download(gdb, 7), ToDouble(db)), kGemmTol) << B;
  }
}

TEST_F(GpuKernelsTest, SigmoidMatchesCpu) {
  const int64_t n = 100'001;
  auto x = RandomVector(n, -20, 20, 6);
  x[0] = -100.0f;  // exp(100) overflows: sigmoid must be 0, not NaN
  x[1] = 100.0f;
  const auto dy = RandomVector(n, -1, 1, 7);
  std::vector<float> y(n), dx(n);
  cpu_.SigmoidForward(x.data(), y.data(), n);
  cpu_.SigmoidBackward(y.data(), dy.data(), dx.data(), n);

  float *gy = Make<float>(n), *gdx = Make<float>(n);
  gpu_->SigmoidForward(Upload(x), gy, n);
  // The backward pass from the CPU's y: 1-y cancels near y = 1, where one
  // ulp of difference in y would change dx beyond any tolerance.
  gpu_->SigmoidBackward(Upload(y), Upload(dy), gdx, n);
  const std::vector<float> got_y = Download(gy, n);
  EXPECT_EQ(got_y[0], 0.0f);
  EXPECT_EQ(got_y[1], 1.0f);
  EXPECT_LT(ElementwiseRelError(got_y, ToDouble(y)), kElementwiseTol);
  EXPECT_LT(ElementwiseRelError(Download(gdx, n), ToDouble(dx)), kElementwiseTol);
}

TEST_F(GpuKernelsTest, ReluMultiplyAndCopyAreExact) {
  // Large enough that the grid-stride loops wrap (65535 blocks * 256).
  const int64_t n = 20'000'003;
  const auto x = RandomVector(n, -1, 1, 8);
  const auto dy = RandomVector(n, -1, 1, 9);
  std::vector<float> y(n), dx(n), product(n);
  cpu_.ReluForward(x.data(), y.data(), n);
  cpu_.ReluBackward(x.data(), dy.data(), dx.data(), n);
  cpu_.Multiply(x.data(), dy.data(), product.data(), n);

  const float *gx = Upload(x), *gdy = Upload(dy);
  float *gy = Make<float>(n), *gdx = Make<float>(n), *gp = Make<float>(n), *gcopy = Make<float>(n);
  gpu_->ReluForward(gx, gy, n);
  gpu_->ReluBackward(gx, gdy, gdx, n);
  gpu_->Multiply(gx, gdy, gp, n);
  gpu_->Copy(gx, gcopy, n);
  // One operation per element, correctly rounded on both sides.
  EXPECT_EQ(Download(gy, n), y);
  EXPECT_EQ(Download(gdx, n), dx);
  EXPECT_EQ(Download(gp, n), product);
  EXPECT_EQ(Download(gcopy, n), x);
}

TEST_F(GpuKernelsTest, ScaledSumMatchesCpu) {
  const int64_t n = 100'003;
  const auto a = RandomVector(n, -1, 1, 35);
  const auto b = RandomVector(n, -1, 1, 36);
  std::vector<float> y(n);
  cpu_.ScaledSum(0.1f, a.data(), -0.99f, b.data(), y.data(), n);
  float* gy = Make<float>(n);
  gpu_->ScaledSum(0.1f, Upload(a), -0.99f, Upload(b), gy, n);
  EXPECT_LT(NormwiseRelError(Download(gy, n), ToDouble(y)), kElementwiseTol);
}

TEST_F(GpuKernelsTest, DropoutMaskIsTheCpusExactly) {
  const int64_t n = 20'000'003;  // the grid-stride loop wraps
  std::vector<float> mask(n);
  cpu_.DropoutMask(0x5eed, 0.4 * (1 << 24), 1.0f / 0.6f, mask.data(), n);
  float* gmask = Make<float>(n);
  gpu_->DropoutMask(0x5eed, 0.4 * (1 << 24), 1.0f / 0.6f, gmask, n);
  EXPECT_EQ(Download(gmask, n), mask);
}

TEST_F(GpuKernelsTest, EmptyCallsAreOk) {
  gpu_->ReluForward(nullptr, nullptr, 0);
  gpu_->Copy(nullptr, nullptr, 0);
  gpu_->CopyToDevice(nullptr, nullptr, 0);
  gpu_->CopyToHost(nullptr, nullptr, 0);
  EXPECT_TRUE(gpu_->TakeError().ok());
}

struct ConvCase {
  const char* name;
  int64_t batch;
  Conv2DShape shape;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

class GpuConvTest : public GpuKernelsTest, public ::testing::WithParamInterface<ConvCase> {};

TEST_P(GpuConvTest, MatchesCpu) {
  const Conv2DShape& g = GetParam().shape;
  const int64_t B = GetParam().batch;
  const int64_t x_size = B * g.height * g.width * g.in_channels;
  const int64_t w_size = g.filter_height * g.filter_width * g.in_channels * g.out_channels;
  const int64_t pixels = B * g.out_height() * g.out_width();  // B*P*Q
  const int64_t y_size = pixels * g.out_channels;
  const auto x = RandomVector(x_size, -1, 1, 10);
  const auto w = RandomVector(w_size, -1, 1, 11);
  const auto b = RandomVector(g.out_channels, -1, 1, 12);
  const auto dy = RandomVector(y_size, -1, 1, 13);
  std::vector<float> y(y_size), dx(x_size), dw(w_size), db(g.out_channels);
  cpu_.Conv2DForward(x.data(), w.data(), b.data(), y.data(), g, B);
  cpu_.Conv2DBackwardInput(dy.data(), w.data(), dx.data(), g, B);
  cpu_.Conv2DBackwardWeights(x.data(), dy.data(), dw.data(), g, B);
  cpu_.BiasBackward(dy.data(), db.data(), pixels, g.out_channels);

  const float *gx = Upload(x), *gw = Upload(w), *gdy = Upload(dy);
  float *gy = Make<float>(y_size), *gdx = Make<float>(x_size), *gdw = Make<float>(w_size),
        *gdb = Make<float>(g.out_channels);
  gpu_->Conv2DForward(gx, gw, Upload(b), gy, g, B);
  gpu_->Conv2DBackwardInput(gdy, gw, gdx, g, B);
  gpu_->Conv2DBackwardWeights(gx, gdy, gdw, g, B);
  gpu_->BiasBackward(gdy, gdb, pixels, g.out_channels);
  EXPECT_LT(NormwiseRelError(Download(gy, y_size), ToDouble(y)), kGemmTol);
  EXPECT_LT(NormwiseRelError(Download(gdx, x_size), ToDouble(dx)), kGemmTol);
  EXPECT_LT(NormwiseRelError(Download(gdw, w_size), ToDouble(dw)), kGemmTol);
  EXPECT_LT(NormwiseRelError(Download(gdb, g.out_channels), ToDouble(db)), kGemmTol);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuConvTest,
    ::testing::Values(ConvCase{"LeNetConv0", 8, ConvShape(28, 28, 1, 5, 5, 20, 1, 0)},
                      ConvCase{"LeNetConv1", 8, ConvShape(12, 12, 20, 5, 5, 50, 1, 0)},
                      ConvCase{"Stride2Pad1", 3, ConvShape(9, 7, 3, 3, 3, 4, 2, 1)},
                      ConvCase{"NonSquareFilterPad2", 2, ConvShape(6, 11, 2, 2, 4, 3, 1, 2)},
                      ConvCase{"OneByOne", 4, ConvShape(5, 5, 16, 1, 1, 8, 1, 0)},
                      ConvCase{"Stride3", 2, ConvShape(13, 13, 3, 3, 3, 5, 3, 0)}));

TEST_F(GpuKernelsTest, ConvAlternatingShapesReuseTheirPlans) {
  // The per-shape cache and the shared scratch: A, B, then A again.
  const Conv2DShape shapes[] = {ConvShape(12, 12, 20, 5, 5, 50, 1, 0),
                                ConvShape(9, 7, 3, 3, 3, 4, 2, 1),
                                ConvShape(12, 12, 20, 5, 5, 50, 1, 0)};
  for (const Conv2DShape& g : shapes) {
    const int64_t B = 2;
    const int64_t x_size = B * g.height * g.width * g.in_channels;
    const int64_t w_size = g.filter_height * g.filter_width * g.in_channels * g.out_channels;
    const int64_t y_size = B * g.out_height() * g.out_width() * g.out_channels;
    const auto x = RandomVector(x_size, -1, 1, 14);
    const auto w = RandomVector(w_size, -1, 1, 15);
    const auto b = RandomVector(g.out_channels, -1, 1, 16);
    std::vector<float> y(y_size);
    cpu_.Conv2DForward(x.data(), w.data(), b.data(), y.data(), g, B);
    float* gy = Make<float>(y_size);
    gpu_->Conv2DForward(Upload(x), Upload(w), Upload(b), gy, g, B);
    EXPECT_LT(NormwiseRelError(Download(gy, y_size), ToDouble(y)), kGemmTol);
  }
}

struct PoolShape {
  int64_t batch, height, width, channels;
};

void PrintTo(const PoolShape& s, std::ostream* os) {
  *os << s.batch << "x" << s.height << "x" << s.width << "x" << s.channels;
}

class GpuMaxPoolTest : public GpuKernelsTest, public ::testing::WithParamInterface<PoolShape> {};

TEST_P(GpuMaxPoolTest, MatchesCpuExactlyWithTies) {
  const auto [B, H, W, C] = GetParam();
  const int64_t x_size = B * H * W * C;
  const int64_t y_size = B * (H / 2) * (W / 2) * C;
  const auto x = TiedVector(x_size, 17);
  const auto dy = RandomVector(y_size, -1, 1, 18);
  std::vector<float> y(y_size), dx(x_size);
  std::vector<int32_t> argmax(y_size);
  cpu_.MaxPool2x2Forward(x.data(), y.data(), argmax.data(), B, H, W, C);
  cpu_.MaxPool2x2Backward(dy.data(), argmax.data(), dx.data(), B, H, W, C);

  float *gy = Make<float>(y_size), *gdx = Make<float>(x_size);
  int32_t* gargmax = Make<int32_t>(y_size);
  gpu_->CopyToDevice(RandomVector(x_size, 5, 6, 19).data(), gdx,
                     x_size * sizeof(float));  // stale values to overwrite
  gpu_->MaxPool2x2Forward(Upload(x), gy, gargmax, B, H, W, C);
  gpu_->MaxPool2x2Backward(Upload(dy), gargmax, gdx, B, H, W, C);
  EXPECT_EQ(Download(gy, y_size), y);
  EXPECT_EQ(Download(gargmax, y_size), argmax);
  EXPECT_EQ(Download(gdx, x_size), dx);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuMaxPoolTest,
                         ::testing::Values(PoolShape{1, 2, 2, 1}, PoolShape{3, 5, 7, 2},
                                           PoolShape{64, 24, 24, 20}, PoolShape{4, 8, 9, 50}));

struct NormShape {
  int64_t rows, channels;
  float offset;  // x is uniform in [offset - 1, offset + 2)
};

void PrintTo(const NormShape& s, std::ostream* os) {
  *os << s.rows << "x" << s.channels << " offset " << s.offset;
}

class GpuBatchNormTest : public GpuKernelsTest, public ::testing::WithParamInterface<NormShape> {};

// The moments, a forward pass on them and its gradients, against the CPU
// (both sum in double); outputs start as NaN, so each must be written.
TEST_P(GpuBatchNormTest, MatchesCpu) {
  const auto [R, C, offset] = GetParam();
  const double epsilon = 1e-3;
  const auto x = RandomVector(R * C, offset - 1, offset + 2, 30);
  const auto dy = RandomVector(R * C, -1, 1, 31);
  const auto gamma = RandomVector(C, 0.5f, 1.5f, 32);
  const auto beta = RandomVector(C, -1, 1, 33);
  std::vector<float> mean(C), variance(C), y(R * C), dgamma(C), dbeta(C), dx(R * C);
  cpu_.ColumnMoments(x.data(), mean.data(), variance.data(), R, C);
  cpu_.BatchNormForward(x.data(), mean.data(), variance.data(), gamma.data(), beta.data(), epsilon,
                        y.data(), R, C);
  cpu_.BatchNormBackward(x.data(), dy.data(), mean.data(), variance.data(), gamma.data(), epsilon,
                         dgamma.data(), dbeta.data(), dx.data(), R, C);

  const auto nans = [](int64_t n) {
    return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
  };
  const float *gx = Upload(x), *ggamma = Upload(gamma);
  float *gmean = Upload(nans(C)), *gvariance = Upload(nans(C)), *gy = Upload(nans(R * C));
  float *gdgamma = Upload(nans(C)), *gdbeta = Upload(nans(C)), *gdx = Upload(nans(R * C));
  gpu_->ColumnMoments(gx, gmean, gvariance, R, C);
  gpu_->BatchNormForward(gx, gmean, gvariance, ggamma, Upload(beta), epsilon, gy, R, C);
  gpu_->BatchNormBackward(gx, Upload(dy), gmean, gvariance, ggamma, epsilon, gdgamma, gdbeta, gdx,
                          R, C);
  EXPECT_LT(NormwiseRelError(Download(gmean, C), ToDouble(mean)), kElementwiseTol);
  EXPECT_LT(NormwiseRelError(Download(gvariance, C), ToDouble(variance)), kElementwiseTol);
  EXPECT_LT(NormwiseRelError(Download(gy, R * C), ToDouble(y)), kElementwiseTol);
  EXPECT_LT(NormwiseRelError(Download(gdgamma, C), ToDouble(dgamma)), kElementwiseTol);
  EXPECT_LT(NormwiseRelError(Download(gdbeta, C), ToDouble(dbeta)), kElementwiseTol);
  EXPECT_LT(NormwiseRelError(Download(gdx, R * C), ToDouble(dx)), kElementwiseTol);

  // Without dx: the same scale and shift gradients, dx untouched.
  float* untouched = Upload(nans(R * C));
  gpu_->BatchNormBackward(gx, Upload(dy), gmean, gvariance, ggamma, epsilon, gdgamma, gdbeta,
                          nullptr, R, C);
  EXPECT_LT(NormwiseRelError(Download(gdgamma, C), ToDouble(dgamma)), kElementwiseTol);
  for (float v : Download(untouched, R * C)) ASSERT_TRUE(std::isnan(v));
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuBatchNormTest,
                         ::testing::Values(NormShape{1, 5, 0}, NormShape{7, 3, 0},
                                           NormShape{100, 500, 0}, NormShape{64 * 24 * 24, 20, 0},
                                           // |mean| >> std: two passes keep the variance
                                           NormShape{5000, 50, 1000}));

// An inference pass normalizes with given (moving) statistics; a negative
// variance, as stale async deltas can leave, counts as 0.
TEST_F(GpuKernelsTest, BatchNormForwardTakesMovingStatisticsAndClampsVariance) {
  const int64_t R = 33, C = 4;
  const auto x = RandomVector(R * C, -1, 1, 34);
  const std::vector<float> mean = {0.5f, -0.25f, 0, 1}, variance = {2, -0.5f, 0, 1},
                           gamma = {1, 2, 0.5f, 1}, beta = {0, 1, -1, 0.5f};
  std::vector<float> y(R * C);
  cpu_.BatchNormForward(x.data(), mean.data(), variance.data(), gamma.data(), beta.data(), 1e-3,
                        y.data(), R, C);
  float* gy = Make<float>(R * C);
  gpu_->BatchNormForward(Upload(x), Upload(mean), Upload(variance), Upload(gamma), Upload(beta),
                         1e-3, gy, R, C);
  EXPECT_LT(NormwiseRelError(Download(gy, R * C), ToDouble(y)), kElementwiseTol);
  for (float v : Download(gy, R * C)) ASSERT_TRUE(std::isfinite(v));
}

struct SoftmaxShape {
  int64_t batch, classes;
  float scale;  // logits are uniform in [-scale, scale)
};

void PrintTo(const SoftmaxShape& s, std::ostream* os) {
  *os << s.batch << "x" << s.classes << " scale " << s.scale;
}

class GpuSoftmaxTest : public GpuKernelsTest, public ::testing::WithParamInterface<SoftmaxShape> {};

TEST_P(GpuSoftmaxTest, MatchesCpu) {
  const auto [B, C, scale] = GetParam();
  const auto logits = RandomVector(B * C, -scale, scale, 20);
  const auto labels = RandomLabels(B, static_cast<int>(C), 21);
  std::vector<float> dlogits(B * C);
  const float loss = cpu_.SoftmaxCrossEntropy(logits.data(), labels.data(), dlogits.data(), B, C);

  const float* glogits = Upload(logits);
  const int32_t* glabels = Upload(labels);
  float* gdlogits = Make<float>(B * C);
  const float got = gpu_->SoftmaxCrossEntropy(glogits, glabels, gdlogits, B, C);
  EXPECT_LT(std::abs(got - loss) / std::abs(loss), kElementwiseTol) << got << " vs " << loss;
  EXPECT_LT(NormwiseRelError(Download(gdlogits, B * C), ToDouble(dlogits)), kElementwiseTol);
  // Without dlogits: the same loss.
  EXPECT_EQ(gpu_->SoftmaxCrossEntropy(glogits, glabels, nullptr, B, C), got);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuSoftmaxTest,
                         ::testing::Values(SoftmaxShape{16, 2, 3}, SoftmaxShape{64, 10, 5},
                                           SoftmaxShape{100, 37, 5}, SoftmaxShape{64, 1000, 5},
                                           SoftmaxShape{5000, 10, 5},
                                           // exp() of these would overflow
                                           SoftmaxShape{16, 10, 1e4f}));

TEST_F(GpuKernelsTest, ArgmaxCorrectMatchesCpuWithTies) {
  for (int64_t C : {1, 10, 33, 1000}) {
    const int64_t B = 777;
    const auto logits = TiedVector(B * C, 22);
    // Labels where the CPU's argmax is, for about half the rows.
    auto labels = RandomLabels(B, static_cast<int>(C), 23);
    for (int64_t i = 0; i < B; i += 2) {
      int32_t arg = 0;
      for (int32_t j = 1; j < C; ++j) {
        if (logits[i * C + j] > logits[i * C + arg]) arg = j;
      }
      labels[i] = arg;
    }
    const int64_t want = cpu_.ArgmaxCorrect(logits.data(), labels.data(), B, C);
    EXPECT_EQ(gpu_->ArgmaxCorrect(Upload(logits), Upload(labels), B, C), want) << C;
  }
}

TEST_F(GpuKernelsTest, AllocateFailsBeyondTheCap) {
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  KernelsOptions options;
  options.gpu_memory_fraction = 0.01;
  auto made = MakeKernels("gpu:0", options);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Kernels& capped = **made;
  const size_t cap = static_cast<size_t>(0.01 * total_bytes);
  const size_t chunk = cap / 10 * 6;  // two fit in no cap

  auto first = capped.Allocate(chunk);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = capped.Allocate(chunk);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kResourceExhausted);
  for (const std::string& part :
       {std::string("gpu:0"), std::to_string(chunk), std::to_string(cap)}) {
    EXPECT_NE(second.status().message().find(part), std::string::npos)
        << part << " in " << second.status().message();
  }
  // Freeing gives the memory back to the cap.
  first->reset();
  EXPECT_TRUE(capped.Allocate(chunk).ok());
}

TEST_F(GpuKernelsTest, FirstErrorIsKeptUntilTaken) {
  const std::vector<float> x = {-1.0f, 2.0f};
  float* y = Upload(x);
  // A negative inner dimension: cuBLAS refuses the GEMM, a failure of the
  // call itself that leaves the GPU usable.
  gpu_->MatmulForward(y, y, y, y, 1, -1, 1);
  gpu_->ReluForward(y, y, 2);  // skipped: an error is pending

  const Status error = gpu_->TakeError();
  ASSERT_FALSE(error.ok());
  for (const char* part : {"gpu:0 MatmulForward: ", "gpu_kernels.cc:", "cublasSgemm"}) {
    EXPECT_NE(error.message().find(part), std::string::npos) << part << " in " << error.message();
  }
  EXPECT_TRUE(gpu_->TakeError().ok()) << "taken errors are cleared";
  EXPECT_EQ(Download(y, 2), x) << "ReluForward ran with an error pending";
  gpu_->ReluForward(y, y, 2);
  EXPECT_EQ(Download(y, 2), (std::vector<float>{0.0f, 2.0f}));
}

TEST_F(GpuKernelsTest, CublasAndCudnnErrorsNameTheirCall) {
  float* buffer = Make<float>(1024);
  // A negative inner dimension: cuBLAS rejects the GEMM.
  gpu_->MatmulForward(buffer, buffer, buffer, buffer, 2, -1, 2);
  Status error = gpu_->TakeError();
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.message().find("gpu:0 MatmulForward: "), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("cublasSgemm"), std::string::npos) << error.message();

  // A 5x5 filter on a 3x3 image without padding: no output pixels, which
  // cuDNN rejects when describing the output.
  const Conv2DShape shape = ConvShape(3, 3, 1, 5, 5, 2, 1, 0);
  ASSERT_LE(shape.out_height(), 0);
  gpu_->Conv2DForward(buffer, buffer, buffer, buffer, shape, 1);
  error = gpu_->TakeError();
  ASSERT_FALSE(error.ok());
  for (const char* part : {"gpu:0 Conv2DForward: ", "gpu_conv_cudnn.cc:",
                           "cudnnSetTensor4dDescriptor", "CUDNN_STATUS_"}) {
    EXPECT_NE(error.message().find(part), std::string::npos) << part << " in " << error.message();
  }
}

}  // namespace
}  // namespace pst
