// The start of the CUDA back end: device discovery and a first kernel with a
// CPU twin (CpuKernels::ReluForward), used to prove the toolchain end to end.
// Built only when WITH_CUDA is ON.
#ifndef PST_KERNELS_GPU_GPU_DEVICE_H_
#define PST_KERNELS_GPU_GPU_DEVICE_H_

#include <cstdint>

#include "common/status.h"

namespace pst {

// How many CUDA GPUs this process may use (CUDA_VISIBLE_DEVICES applies).
// 0 when there is no GPU or no driver; never fails.
int CudaDeviceCount();

// x and y are (N), in host memory: y = max(x, 0), computed on the current
// GPU (copies in, runs, copies out). Errors: FailedPrecondition when no GPU
// is usable, Internal for other CUDA failures.
Status ReluForwardGpu(const float* x, float* y, int64_t n);

}  // namespace pst

#endif  // PST_KERNELS_GPU_GPU_DEVICE_H_
