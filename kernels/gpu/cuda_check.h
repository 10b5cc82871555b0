// The one check for GPU library calls: a failed status of the CUDA runtime,
// cuBLAS or cuDNN becomes a Status naming the call, file:line, the library's
// description and a hint, and the enclosing function returns it. Library
// code never aborts on a GPU error.
//
//   PST_CUDA_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, kind));
//   PST_CUDA_RETURN_IF_ERROR(cublasSgemm(handle, ...));
//
// The macro picks the library by overload of CudaStatus on the status type.
// The cuDNN overload is defined in the cuDNN translation unit
// (gpu_conv_cudnn.cc), the only one that includes cudnn.h.
#ifndef PST_KERNELS_GPU_CUDA_CHECK_H_
#define PST_KERNELS_GPU_CUDA_CHECK_H_

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <string>

#include "common/status.h"

namespace pst {

// OK for cudaSuccess; otherwise FailedPrecondition (no usable device or
// driver), ResourceExhausted (out of GPU memory) or Internal. Also clears
// CUDA's last-error slot so that the failure is not reported a second time
// by an unrelated later call.
Status CudaStatus(cudaError_t error, const char* expr, const char* file, int line);
// OK for CUBLAS_STATUS_SUCCESS; otherwise ResourceExhausted (out of GPU
// memory), FailedPrecondition (cuBLAS could not start) or Internal.
Status CudaStatus(cublasStatus_t status, const char* expr, const char* file, int line);

// The failure of one library call, for the CudaStatus overloads:
// "FILE:LINE: EXPR failed: ERROR; hint: HINT".
Status GpuCallError(Code code, const char* expr, const char* file, int line,
                    const std::string& error, const char* hint);

}  // namespace pst

#define PST_CUDA_RETURN_IF_ERROR(expr) \
  PST_RETURN_IF_ERROR(::pst::CudaStatus((expr), #expr, __FILE__, __LINE__))

#endif  // PST_KERNELS_GPU_CUDA_CHECK_H_
