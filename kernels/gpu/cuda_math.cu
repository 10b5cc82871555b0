// The small CUDA kernels (cuda_math.h). Element-wise kernels use grid-stride
// loops, so that a grid capped at kMaxBlocks covers any N; row-wise kernels
// (softmax, argmax) give each row one warp.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "kernels/dropout_hash.h"
#include "kernels/gpu/cuda_check.h"
#include "kernels/gpu/cuda_math.h"

namespace pst {
namespace {

constexpr int kThreads = 256;  // per block
constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = kThreads / kWarpSize;
constexpr int64_t kMaxBlocks = 65535;
constexpr unsigned kFullMask = 0xffffffffu;

// Blocks of kThreads for one thread per item of `items`, at most kMaxBlocks.
int Blocks(int64_t items, int64_t items_per_block = kThreads) {
  return static_cast<int>(std::min((items + items_per_block - 1) / items_per_block, kMaxBlocks));
}

__device__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ int64_t GridThreads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// y is (N): y = value.
__global__ void FillKernel(float* y, float value, int64_t n) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) y[i] = value;
}

// x is (ROWS,COLS), y is (COLS,ROWS): y = x^T. One thread per element of y,
// so that the writes are coalesced.
__global__ void TransposeKernel(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const int64_t c = i / rows, r = i % rows;
    y[i] = x[r * cols + c];
  }
}

// y is (ROWS,COLS), b is (COLS): y[r,c] += b[c].
__global__ void AddBiasKernel(float* y, const float* b, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    y[i] += b[i % cols];
  }
}

__global__ void DropoutMaskKernel(uint64_t seed, uint32_t threshold, float scale, float* mask,
                                  int64_t n) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    mask[i] = DropoutMaskValue(seed, i, threshold, scale);
  }
}

// x and y are (N): y = op(x).
template <typename Op>
__global__ void MapKernel(const float* x, float* y, int64_t n, Op op) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) y[i] = op(x[i]);
}

// a, b and y are (N): y = op(a, b).
template <typename Op>
__global__ void ZipKernel(const float* a, const float* b, float* y, int64_t n, Op op) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    y[i] = op(a[i], b[i]);
  }
}

struct Sigmoid {
  // expf(-x) overflows to +inf for x < -88 and the quotient is then exactly
  // 0, as on the CPU.
  __device__ float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};
struct SigmoidGrad {  // (y, dy) -> dx
  __device__ float operator()(float y, float dy) const { return dy * y * (1.0f - y); }
};
struct Relu {
  __device__ float operator()(float x) const { return fmaxf(x, 0.0f); }
};
struct ReluGrad {  // (x, dy) -> dx
  __device__ float operator()(float x, float dy) const { return x > 0.0f ? dy : 0.0f; }
};
struct Product {
  __device__ float operator()(float a, float b) const { return a * b; }
};

struct LinearCombination {
  float alpha, beta;
  __device__ float operator()(float a, float b) const { return alpha * a + beta * b; }
};

template <typename Op>
Status Map(cudaStream_t stream, const float* x, float* y, int64_t n, Op op) {
  if (n <= 0) return Status::OK();
  MapKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n, op);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

template <typename Op>
Status Zip(cudaStream_t stream, const float* a, const float* b, float* y, int64_t n, Op op) {
  if (n <= 0) return Status::OK();
  ZipKernel<<<Blocks(n), kThreads, 0, stream>>>(a, b, y, n, op);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

// x is (B,H,W,C); y and argmax are (B,H/2,W/2,C). One thread per output.
__global__ void MaxPool2x2ForwardKernel(const float* x, float* y, int32_t* argmax, int64_t batch,
                                        int64_t height, int64_t width, int64_t channels) {
  const int64_t out_h = height / 2, out_w = width / 2;
  const int64_t n_out = batch * out_h * out_w * channels;
  for (int64_t i = GlobalThread(); i < n_out; i += GridThreads()) {
    const int64_t c = i % channels;
    const int64_t pixel = i / channels;  // (n, row, col) of the output
    const int64_t col = pixel % out_w;
    const int64_t row = (pixel / out_w) % out_h;
    const int64_t n = pixel / (out_w * out_h);
    const int64_t top_left = ((n * height + 2 * row) * width + 2 * col) * channels + c;
    // The window in row-major order; strictly greater: the first of tied
    // values wins, as on the CPU.
    const int64_t window[4] = {top_left, top_left + channels, top_left + width * channels,
                               top_left + (width + 1) * channels};
    int64_t best = window[0];
    for (int k = 1; k < 4; ++k) {
      if (x[window[k]] > x[best]) best = window[k];
    }
    y[i] = x[best];
    argmax[i] = static_cast<int32_t>(best);
  }
}

// dy and argmax are (N_OUT), dx is (X_SIZE): dx[argmax[i]] = dy[i]. The
// windows do not overlap, so no two threads write the same element.
__global__ void MaxPool2x2BackwardKernel(const float* dy, const int32_t* argmax, float* dx,
                                         int64_t n_out, int64_t x_size) {
  for (int64_t i = GlobalThread(); i < n_out; i += GridThreads()) {
    const int64_t target = argmax[i];
    if (target >= 0 && target < x_size) dx[target] = dy[i];
  }
}

__device__ float WarpMax(float v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  }
  return v;
}

__device__ float WarpSum(float v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(kFullMask, v, offset);
  }
  return v;
}

// The first row of this thread's warp, and the stride between its rows. The
// row is the same for all lanes of a warp, so the loop over rows never
// splits a warp and the full-mask shuffles are safe.
__device__ int64_t FirstWarpRow() { return GlobalThread() / kWarpSize; }
__device__ int64_t GridWarps() { return GridThreads() / kWarpSize; }

// logits and dlogits are (B,C), labels and row_loss are (B). One warp per
// row: max, then sum of exp(z - max), then the loss and the gradient.
__global__ void SoftmaxCrossEntropyKernel(const float* logits, const int32_t* labels,
                                          float* dlogits, float* row_loss, int64_t batch,
                                          int64_t classes, float inv_batch) {
  const int lane = threadIdx.x % kWarpSize;
  for (int64_t row = FirstWarpRow(); row < batch; row += GridWarps()) {
    const float* z = logits + row * classes;
    float max = -INFINITY;
    for (int64_t j = lane; j < classes; j += kWarpSize) max = fmaxf(max, z[j]);
    max = WarpMax(max);
    float sum_exp = 0.0f;
    for (int64_t j = lane; j < classes; j += kWarpSize) {
      sum_exp += expf(z[j] - max);
    }
    const float log_sum_exp = max + logf(WarpSum(sum_exp));
    const int64_t label = labels[row];
    const bool valid = label >= 0 && label < classes;
    if (lane == 0) row_loss[row] = valid ? log_sum_exp - z[label] : NAN;
    if (dlogits == nullptr) continue;
    float* d = dlogits + row * classes;
    for (int64_t j = lane; j < classes; j += kWarpSize) {
      const float p = expf(z[j] - log_sum_exp) * inv_batch;
      d[j] = j == label ? p - inv_batch : p;
    }
  }
}

// Whether (value, index) beats the best so far: larger, or equal and first.
__device__ bool Beats(float value, int64_t index, float best, int64_t best_index) {
  return value > best || (value == best && index < best_index);
}

// logits is (B,C), labels is (B), *correct is one counter (zeroed before).
// One warp per row: each lane finds the first max of its columns, then the
// warp combines them.
__global__ void ArgmaxCorrectKernel(const float* logits, const int32_t* labels,
                                    unsigned long long* correct,  // NOLINT
                                    int64_t batch, int64_t classes) {
  const int lane = threadIdx.x % kWarpSize;
  for (int64_t row = FirstWarpRow(); row < batch; row += GridWarps()) {
    const float* z = logits + row * classes;
    // `classes` stands for "none yet": it loses every tie.
    float best = -INFINITY;
    int64_t best_index = classes;
    for (int64_t j = lane; j < classes; j += kWarpSize) {
      if (Beats(z[j], j, best, best_index)) {
        best = z[j];
        best_index = j;
      }
    }
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(kFullMask, best, offset);
      const int64_t other_index = __shfl_xor_sync(kFullMask, best_index, offset);
      if (Beats(other, other_index, best, best_index)) {
        best = other;
        best_index = other_index;
      }
    }
    if (lane == 0 && best_index == labels[row]) atomicAdd(correct, 1ull);
  }
}

}  // namespace

Status CudaFill(cudaStream_t stream, float* y, float value, int64_t n) {
  if (n <= 0) return Status::OK();
  FillKernel<<<Blocks(n), kThreads, 0, stream>>>(y, value, n);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaTranspose(cudaStream_t stream, const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return Status::OK();
  TransposeKernel<<<Blocks(rows * cols), kThreads, 0, stream>>>(x, y, rows, cols);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaAddBias(cudaStream_t stream, float* y, const float* b, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return Status::OK();
  AddBiasKernel<<<Blocks(rows * cols), kThreads, 0, stream>>>(y, b, rows, cols);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaSigmoidForward(cudaStream_t stream, const float* x, float* y, int64_t n) {
  return Map(stream, x, y, n, Sigmoid());
}

Status CudaSigmoidBackward(cudaStream_t stream, const float* y, const float* dy, float* dx,
                           int64_t n) {
  return Zip(stream, y, dy, dx, n, SigmoidGrad());
}

Status CudaReluForward(cudaStream_t stream, const float* x, float* y, int64_t n) {
  return Map(stream, x, y, n, Relu());
}

Status CudaReluBackward(cudaStream_t stream, const float* x, const float* dy, float* dx,
                        int64_t n) {
  return Zip(stream, x, dy, dx, n, ReluGrad());
}

Status CudaMultiply(cudaStream_t stream, const float* a, const float* b, float* y, int64_t n) {
  return Zip(stream, a, b, y, n, Product());
}

Status CudaDropoutMask(cudaStream_t stream, uint64_t seed, uint32_t threshold, float scale,
                       float* mask, int64_t n) {
  if (n <= 0) return Status::OK();
  DropoutMaskKernel<<<Blocks(n), kThreads, 0, stream>>>(seed, threshold, scale, mask, n);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaScaledSum(cudaStream_t stream, float alpha, const float* a, float beta, const float* b,
                     float* y, int64_t n) {
  return Zip(stream, a, b, y, n, LinearCombination{alpha, beta});
}

Status CudaMaxPool2x2Forward(cudaStream_t stream, const float* x, float* y, int32_t* argmax,
                             int64_t batch, int64_t height, int64_t width, int64_t channels) {
  const int64_t n_out = batch * (height / 2) * (width / 2) * channels;
  if (n_out <= 0) return Status::OK();
  MaxPool2x2ForwardKernel<<<Blocks(n_out), kThreads, 0, stream>>>(x, y, argmax, batch, height,
                                                                  width, channels);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaMaxPool2x2Backward(cudaStream_t stream, const float* dy, const int32_t* argmax,
                              float* dx, int64_t batch, int64_t height, int64_t width,
                              int64_t channels) {
  const int64_t x_size = batch * height * width * channels;
  const int64_t n_out = batch * (height / 2) * (width / 2) * channels;
  if (x_size <= 0) return Status::OK();
  PST_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dx, 0, x_size * sizeof(float), stream));
  if (n_out <= 0) return Status::OK();
  MaxPool2x2BackwardKernel<<<Blocks(n_out), kThreads, 0, stream>>>(dy, argmax, dx, n_out, x_size);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaSoftmaxCrossEntropy(cudaStream_t stream, const float* logits, const int32_t* labels,
                               float* dlogits, float* row_loss, int64_t batch, int64_t classes) {
  if (batch <= 0) return Status::OK();
  const float inv_batch = 1.0f / static_cast<float>(batch);
  SoftmaxCrossEntropyKernel<<<Blocks(batch, kWarpsPerBlock), kThreads, 0, stream>>>(
      logits, labels, dlogits, row_loss, batch, classes, inv_batch);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

Status CudaArgmaxCorrect(cudaStream_t stream, const float* logits, const int32_t* labels,
                         unsigned long long* correct,  // NOLINT(runtime/int)
                         int64_t batch, int64_t classes) {
  PST_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(correct, 0, sizeof(*correct), stream));
  if (batch <= 0 || classes <= 0) return Status::OK();
  ArgmaxCorrectKernel<<<Blocks(batch, kWarpsPerBlock), kThreads, 0, stream>>>(
      logits, labels, correct, batch, classes);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

}  // namespace pst
