// The CUDA kernels against their CPU twins. Skips (never passes) without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/gpu/gpu_device.h"

namespace pst {
namespace {

TEST(GpuKernelsTest, DeviceCountDoesNotCrash) {
  EXPECT_GE(CudaDeviceCount(), 0);
}

TEST(GpuKernelsTest, ReluForwardMatchesCpu) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA GPU: skipping";
  // Large enough that the grid-stride loop wraps (65535 blocks * 256).
  const int64_t n = 20'000'003;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);

  std::vector<float> want(n), got(n, -1.0f);
  CpuKernels().ReluForward(x.data(), want.data(), n);
  const Status s = ReluForwardGpu(x.data(), got.data(), n);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // max(x, 0) is exact on both sides: tolerance zero.
  EXPECT_EQ(got, want);
}

TEST(GpuKernelsTest, ReluForwardOfNothingIsOk) {
  EXPECT_TRUE(ReluForwardGpu(nullptr, nullptr, 0).ok());
}

}  // namespace
}  // namespace pst
