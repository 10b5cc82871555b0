// A single-threaded oneDNN back end (the workers' default) must run on its
// caller's thread alone: a primitive created before the thread count was
// set kept a second OpenMP thread, spinning after every call, beside each
// worker (a 3-process MNIST job took 32 s instead of 11 s on 2 cores). Its
// own test binary, so that no other test has started OpenMP threads first.
#include <dirent.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "kernels/kernels.h"

namespace pst {
namespace {

int ThreadsOfThisProcess() {
  int count = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  while (const dirent* entry = readdir(tasks)) count += entry->d_name[0] != '.';
  closedir(tasks);
  return count;
}

TEST(OnednnThreadsTest, OneThreadKernelsStartNoOpenMpThread) {
  if (std::thread::hardware_concurrency() < 2) {
    GTEST_SKIP() << "one core: OpenMP's default is a single thread already";
  }
  const int before = ThreadsOfThisProcess();
  KernelsOptions options;
  options.cpu_kernels = CpuKernelsKind::kOnednn;
  options.intra_op_threads = 1;
  auto kernels = MakeKernels("cpu", options);
  ASSERT_TRUE(kernels.ok()) << kernels.status().ToString();
  Kernels& k = **kernels;
  const int64_t batch = 64, in = 784, out = 256;
  std::vector<float> x(batch * in, 0.5f), w(in * out, 0.01f), b(out, 0.0f), y(batch * out);
  std::vector<float> dw(in * out), dx(batch * in);
  Conv2DShape conv;
  conv.height = conv.width = 28;
  conv.in_channels = 1;
  conv.filter_height = conv.filter_width = 5;
  conv.out_channels = 20;
  std::vector<float> image(batch * 28 * 28, 0.5f), filters(5 * 5 * 20, 0.01f), bias(20, 0.0f);
  std::vector<float> maps(batch * 24 * 24 * 20);
  for (int i = 0; i < 3; ++i) {
    k.MatmulForward(x.data(), w.data(), b.data(), y.data(), batch, in, out);
    k.MatmulBackwardInput(y.data(), w.data(), dx.data(), batch, in, out);
    k.MatmulBackwardWeights(x.data(), y.data(), dw.data(), batch, in, out);
    k.Conv2DForward(image.data(), filters.data(), bias.data(), maps.data(), conv, batch);
  }
  EXPECT_EQ(ThreadsOfThisProcess(), before) << "the kernels started threads of their own";
}

}  // namespace
}  // namespace pst
