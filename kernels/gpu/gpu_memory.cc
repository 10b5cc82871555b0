#include "kernels/gpu/gpu_memory.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "kernels/gpu/cuda_check.h"

namespace pst {
namespace {

// One cudaMalloc'ed block on one device.
class CudaBuffer : public DeviceBuffer {
 public:
  CudaBuffer(void* data, size_t bytes, int device_index,
             std::shared_ptr<std::atomic<size_t>> in_use)
      : data_(data), bytes_(bytes), device_index_(device_index), in_use_(std::move(in_use)) {}
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  ~CudaBuffer() override {
    if (data_ != nullptr) {
      // cudaFree acts on the current device: make it ours for the call, and
      // leave the thread's current device as it was.
      int current = -1;
      const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device_index_ &&
                            cudaSetDevice(device_index_) == cudaSuccess;
      // A destructor has nobody to report a failure to (at process exit the
      // runtime may already be unloading); clear it so that no later call
      // picks it up as its own.
      if (cudaFree(data_) != cudaSuccess) cudaGetLastError();
      if (switched) cudaSetDevice(current);
    }
    *in_use_ -= bytes_;
  }

  void* data() override { return data_; }
  size_t bytes() const override { return bytes_; }

 private:
  void* const data_;
  const size_t bytes_;
  const int device_index_;
  const std::shared_ptr<std::atomic<size_t>> in_use_;
};

}  // namespace

GpuMemory::GpuMemory(int device_index, std::string device, size_t cap)
    : device_index_(device_index),
      device_(std::move(device)),
      cap_(cap),
      in_use_(std::make_shared<std::atomic<size_t>>(0)) {}

StatusOr<std::unique_ptr<DeviceBuffer>> GpuMemory::Allocate(size_t bytes) {
  const size_t in_use = *in_use_;
  if (bytes > cap_ - in_use) {  // in_use <= cap_ always: no wrap-around
    return ResourceExhausted(device_ + ": allocating " + std::to_string(bytes) +
                             " bytes would exceed the memory cap of " + std::to_string(cap_) +
                             " bytes (" + std::to_string(in_use) +
                             " in use); raise --gpu_memory_fraction or lower the batch size");
  }
  void* data = nullptr;
  if (bytes > 0) {
    PST_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_index_));
    PST_CUDA_RETURN_IF_ERROR(cudaMalloc(&data, bytes));
  }
  *in_use_ += bytes;
  return std::unique_ptr<DeviceBuffer>(new CudaBuffer(data, bytes, device_index_, in_use_));
}

Status GpuMemory::Reserve(size_t bytes, std::unique_ptr<DeviceBuffer>* scratch) {
  if (*scratch != nullptr && (*scratch)->bytes() >= bytes) return Status::OK();
  scratch->reset();  // free first: the old block must not count against the cap
  PST_ASSIGN_OR_RETURN(*scratch, Allocate(bytes));
  return Status::OK();
}

}  // namespace pst
