// The one check for CUDA runtime calls: a failed cudaError_t becomes a Status
// naming the call, file:line, CUDA's description and a hint, and the enclosing
// function returns it. Library code never aborts on a CUDA error.
//
//   PST_CUDA_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, kind));
#ifndef PST_KERNELS_GPU_CUDA_CHECK_H_
#define PST_KERNELS_GPU_CUDA_CHECK_H_

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace pst {

// OK for cudaSuccess; otherwise a FailedPrecondition (no usable device or
// driver) or Internal status. Also clears CUDA's last-error slot so that the
// failure is not reported a second time by an unrelated later call.
Status CudaStatus(cudaError_t error, const char* expr, const char* file,
                  int line);

}  // namespace pst

#define PST_CUDA_RETURN_IF_ERROR(expr) \
  PST_RETURN_IF_ERROR(::pst::CudaStatus((expr), #expr, __FILE__, __LINE__))

#endif  // PST_KERNELS_GPU_CUDA_CHECK_H_
