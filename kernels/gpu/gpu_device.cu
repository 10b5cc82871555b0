#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/gpu/cuda_check.h"
#include "kernels/gpu/gpu_device.h"

namespace pst {
namespace {

// x and y are (N): y = max(x, 0). Grid-stride, so any grid covers any N.
__global__ void ReluForwardKernel(const float* x, float* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}

// Owns one cudaMalloc'ed buffer, so that every error path frees it.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }

  Status Allocate(size_t bytes) {
    PST_CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr_, bytes));
    return Status::OK();
  }
  float* f32() { return static_cast<float*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls do not see it
    return 0;
  }
  return count;
}

Status ReluForwardGpu(const float* x, float* y, int64_t n) {
  if (n == 0) return Status::OK();
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  DeviceBuffer dx, dy;
  PST_RETURN_IF_ERROR(dx.Allocate(bytes));
  PST_RETURN_IF_ERROR(dy.Allocate(bytes));
  PST_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(dx.f32(), x, bytes, cudaMemcpyHostToDevice));

  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocks = 65535;
  const int blocks = static_cast<int>(
      std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
  ReluForwardKernel<<<blocks, kThreads>>>(dx.f32(), dy.f32(), n);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  // The copy waits for the kernel, and reports faults that happened in it.
  PST_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(y, dy.f32(), bytes, cudaMemcpyDeviceToHost));
  return Status::OK();
}

}  // namespace pst
