// The CUDA back end of Kernels ("gpu:N"), built only when WITH_CUDA is ON.
//
// GpuKernels (in gpu_kernels.cc) runs matrix products on cuBLAS,
// convolutions on cuDNN (gpu_conv_cudnn.h) and the rest on small CUDA
// kernels (cuda_math.h); each is tested against CpuKernels, its reference,
// in gpu_kernels_test.cc. Each object is a per-device context: one CUDA
// stream, a cuBLAS and a cuDNN handle bound to it, a pinned host staging
// buffer for the copies, and its scratch memory. Nothing is shared between
// objects.
//
// Execution: every call is queued on the stream and returns before the GPU
// has finished it, except those whose results reach the host and which
// therefore wait for the stream: CopyToDevice, CopyToHost,
// SoftmaxCrossEntropy and ArgmaxCorrect.
//
// Errors: a failed CUDA, cuBLAS or cuDNN call is recorded, with the device,
// the Kernels method, the call, file:line and a hint; later calls do
// nothing until TakeError() returns and clears it (SoftmaxCrossEntropy then
// returns NaN, ArgmaxCorrect 0). A fault inside a kernel (a bad address)
// only shows at the next call that waits for the stream, and is reported
// there.
//
// Memory: buffers from Allocate() and the object's own scratch count
// against a cap of KernelsOptions::gpu_memory_fraction of the device's
// total memory; beyond it Allocate() fails with ResourceExhausted. Buffers
// may outlive the object.
//
// Thread safety: as Kernels, one thread at a time; each call makes the
// object's GPU the calling thread's current CUDA device.
#ifndef PST_KERNELS_GPU_GPU_KERNELS_H_
#define PST_KERNELS_GPU_GPU_KERNELS_H_

#include <memory>

#include "common/status.h"
#include "kernels/kernels.h"

namespace pst {

// Kernels on CUDA device `device_index`, named "gpu:N". Device indexes are
// those the CUDA runtime shows this process: with CUDA_VISIBLE_DEVICES set,
// gpu:0 is the first GPU it lists. FailedPrecondition naming "gpu:N" when
// there is no usable driver or GPU, or N is not below the device count;
// InvalidArgument for a gpu_memory_fraction outside (0, 1].
StatusOr<std::unique_ptr<Kernels>> MakeGpuKernels(int device_index, const KernelsOptions& options);

}  // namespace pst

#endif  // PST_KERNELS_GPU_GPU_KERNELS_H_
