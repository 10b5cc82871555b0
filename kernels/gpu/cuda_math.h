// The small CUDA kernels of GpuKernels: everything that is neither a matrix
// product (cuBLAS) nor a convolution (cuDNN). Each function queues its
// kernel(s) on `stream` and returns the launch's status; the work itself
// runs asynchronously, so a fault inside a kernel surfaces at the stream's
// next synchronisation. All pointers are device memory.
//
// Shapes and semantics are those of the Kernels method of the same name
// (kernels.h), whose CpuKernels implementation is each one's CPU twin and
// reference in gpu_kernels_test.cc.
#ifndef PST_KERNELS_GPU_CUDA_MATH_H_
#define PST_KERNELS_GPU_CUDA_MATH_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"

namespace pst {

// y is (N): y = value.
Status CudaFill(cudaStream_t stream, float* y, float value, int64_t n);
// x is (ROWS,COLS), y is (COLS,ROWS): y = x^T.
Status CudaTranspose(cudaStream_t stream, const float* x, float* y, int64_t rows, int64_t cols);
// y is (ROWS,COLS), b is (COLS): y += b on every row.
Status CudaAddBias(cudaStream_t stream, float* y, const float* b, int64_t rows, int64_t cols);

Status CudaSigmoidForward(cudaStream_t stream, const float* x, float* y, int64_t n);
Status CudaSigmoidBackward(cudaStream_t stream, const float* y, const float* dy, float* dx,
                           int64_t n);
Status CudaReluForward(cudaStream_t stream, const float* x, float* y, int64_t n);
Status CudaReluBackward(cudaStream_t stream, const float* x, const float* dy, float* dx, int64_t n);
Status CudaMultiply(cudaStream_t stream, const float* a, const float* b, float* y, int64_t n);
Status CudaDropoutMask(cudaStream_t stream, uint64_t seed, uint32_t threshold, float scale,
                       float* mask, int64_t n);
Status CudaScaledSum(cudaStream_t stream, float alpha, const float* a, float beta, const float* b,
                     float* y, int64_t n);

Status CudaMaxPool2x2Forward(cudaStream_t stream, const float* x, float* y, int32_t* argmax,
                             int64_t batch, int64_t height, int64_t width, int64_t channels);
// Zeroes dx, then scatters dy into it.
Status CudaMaxPool2x2Backward(cudaStream_t stream, const float* dy, const int32_t* argmax,
                              float* dx, int64_t batch, int64_t height, int64_t width,
                              int64_t channels);

// logits and dlogits are (B,C), labels and row_loss are (B): row_loss[i] =
// -log softmax(logits)[i, labels[i]] (NaN for a label outside [0,C)), and
// unless dlogits is null, dlogits = (softmax(logits) - onehot(labels)) / B.
// The mean of row_loss is SoftmaxCrossEntropy's result.
Status CudaSoftmaxCrossEntropy(cudaStream_t stream, const float* logits, const int32_t* labels,
                               float* dlogits, float* row_loss, int64_t batch, int64_t classes);
// logits is (B,C), labels is (B), *correct is one counter: *correct = how many
// rows have their first largest logit at the label.
Status CudaArgmaxCorrect(cudaStream_t stream, const float* logits, const int32_t* labels,
                         unsigned long long* correct,  // NOLINT(runtime/int)
                         int64_t batch, int64_t classes);

}  // namespace pst

#endif  // PST_KERNELS_GPU_CUDA_MATH_H_
