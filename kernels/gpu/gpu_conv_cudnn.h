// CudnnConv: GpuKernels' 2-D convolutions on cuDNN. Its .cc is the only
// translation unit that includes cudnn.h.
//
// Layouts: activations NHWC as everywhere in Kernels, but filters in cuDNN's
// NHWC filter layout KRSC, (K,R,S,C); GpuKernels transposes its HWIO
// (R,S,C,K) filters to and from it. Bias is not applied here.
//
// Per shape (Conv2DShape and batch) the descriptors and the three
// algorithms are chosen once, by cuDNN's heuristics, and cached; the
// workspace is one buffer, grown as needed. Convolutions run in float32 FMA
// math (no TF32) so that they agree with the CPU to float32 tolerance.
//
// Ownership: borrows the stream and the GpuMemory, which must outlive it.
// Thread safety: one thread at a time, with the stream's device current.
#ifndef PST_KERNELS_GPU_GPU_CONV_CUDNN_H_
#define PST_KERNELS_GPU_GPU_CONV_CUDNN_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>

#include "common/status.h"
#include "kernels/gpu/gpu_memory.h"
#include "kernels/kernels.h"

// cudnn.h's handle type, cudnnHandle_t, is a pointer to this.
struct cudnnContext;

namespace pst {

class CudnnConv {
 public:
  // A cuDNN handle bound to `stream`. FailedPrecondition when cuDNN cannot
  // start on the current device.
  static StatusOr<std::unique_ptr<CudnnConv>> Create(cudaStream_t stream, GpuMemory* memory);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  // x is (B,H,W,C), w is (K,R,S,C), y is (B,P,Q,K): y = x conv w.
  Status Forward(const float* x, const float* w, float* y, const Conv2DShape& shape, int64_t batch);
  // dy is (B,P,Q,K), w is (K,R,S,C), dx is (B,H,W,C): the gradient of
  // Forward w.r.t. x.
  Status BackwardData(const float* dy, const float* w, float* dx, const Conv2DShape& shape,
                      int64_t batch);
  // x is (B,H,W,C), dy is (B,P,Q,K), dw is (K,R,S,C): the gradient of
  // Forward w.r.t. w.
  Status BackwardFilter(const float* x, const float* dy, float* dw, const Conv2DShape& shape,
                        int64_t batch);

 private:
  struct Plan;  // one shape's descriptors, algorithms and workspace sizes
  using PlanKey = std::array<int64_t, 9>;

  CudnnConv(cudnnContext* handle, GpuMemory* memory);
  // The cached plan of (shape, batch), made on first use.
  StatusOr<const Plan*> PlanFor(const Conv2DShape& shape, int64_t batch);
  // The workspace, grown to at least `bytes` (null when none is needed).
  StatusOr<void*> Workspace(size_t bytes);

  cudnnContext* const handle_;
  GpuMemory* const memory_;
  std::map<PlanKey, std::unique_ptr<Plan>> plans_;
  std::unique_ptr<DeviceBuffer> workspace_;
};

}  // namespace pst

#endif  // PST_KERNELS_GPU_GPU_CONV_CUDNN_H_
