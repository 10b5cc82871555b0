// The batch-normalization kernels of GpuKernels (kernels.h's ColumnMoments,
// BatchNormForward and BatchNormBackward, whose CpuKernels implementation is
// each one's reference in gpu_kernels_test.cc). x, dy, y and dx are (ROWS,C)
// row-major, the per-column vectors (C); all pointers are device memory,
// and each function queues its kernels on `stream` and returns the launch's
// status.
//
// Column sums are reduced in double: each thread sums a strided share of a
// column's rows, a block adds its threads' sums, and blocks add theirs into
// scratch with atomics, in no fixed order: the double sums can differ in
// their last bits from run to run, which rounding to float almost always
// hides.
#ifndef PST_KERNELS_GPU_CUDA_BATCH_NORM_H_
#define PST_KERNELS_GPU_CUDA_BATCH_NORM_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"

namespace pst {

// scratch: 4C doubles (the backward pass needs all, the moments half).
Status CudaColumnMoments(cudaStream_t stream, const float* x, float* mean, float* variance,
                         double* scratch, int64_t rows, int64_t channels);
// channel is scratch of 2C floats (each column's scale and shift).
Status CudaBatchNormForward(cudaStream_t stream, const float* x, const float* mean,
                            const float* variance, const float* gamma, const float* beta,
                            double epsilon, float* y, float* channel, int64_t rows,
                            int64_t channels);
// dx may be null.
Status CudaBatchNormBackward(cudaStream_t stream, const float* x, const float* dy,
                             const float* mean, const float* variance, const float* gamma,
                             double epsilon, float* dgamma, float* dbeta, float* dx,
                             double* scratch, int64_t rows, int64_t channels);

}  // namespace pst

#endif  // PST_KERNELS_GPU_CUDA_BATCH_NORM_H_
