// GpuMemory: the device memory one GpuKernels takes from its GPU, under a
// cap: the buffers its Allocate() hands out and the scratch it keeps itself
// (cuDNN workspace, transposed filters, ...). Memory that the CUDA runtime,
// cuBLAS and cuDNN take for themselves (contexts, cuBLAS's workspace) is not
// counted.
//
// Ownership: buffers are owned by whoever asked for them and may outlive the
// GpuMemory (the count they decrement is shared). Thread safety: one thread
// at a time, like Kernels; buffers may be freed from any thread.
#ifndef PST_KERNELS_GPU_GPU_MEMORY_H_
#define PST_KERNELS_GPU_GPU_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "kernels/kernels.h"

namespace pst {

class GpuMemory {
 public:
  // Memory of CUDA device `device_index`, named `device` ("gpu:0") in
  // errors, at most `cap` bytes of it in use at once.
  GpuMemory(int device_index, std::string device, size_t cap);
  GpuMemory(const GpuMemory&) = delete;
  GpuMemory& operator=(const GpuMemory&) = delete;

  // A cudaMalloc'ed block of `bytes` (null data for 0 bytes), freed by its
  // destructor. ResourceExhausted beyond the cap or when the GPU is out of
  // memory.
  StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(size_t bytes);

  // Makes *scratch hold at least `bytes`: reallocates (losing the contents)
  // only when it is null or smaller. Errors as Allocate.
  Status Reserve(size_t bytes, std::unique_ptr<DeviceBuffer>* scratch);

 private:
  const int device_index_;
  const std::string device_;
  const size_t cap_;
  // Bytes of the live buffers; shared with them.
  std::shared_ptr<std::atomic<size_t>> in_use_;
};

}  // namespace pst

#endif  // PST_KERNELS_GPU_GPU_MEMORY_H_
