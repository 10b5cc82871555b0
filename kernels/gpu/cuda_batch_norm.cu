// The batch-normalization kernels (cuda_batch_norm.h). A column reduction
// gives each block 32 consecutive columns (a warp reads them from one row,
// coalesced) and 8 rows at a time; element-wise kernels use grid-stride
// loops over the (ROWS,C) matrix.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/gpu/cuda_batch_norm.h"
#include "kernels/gpu/cuda_check.h"

namespace pst {
namespace {

constexpr int kColumns = 32;  // columns of a reduction block
constexpr int kRowLanes = 8;  // rows it reads at once
constexpr int64_t kMaxRowBlocks = 512;
constexpr int kThreads = 256;  // of an element-wise block
constexpr int64_t kMaxBlocks = 65535;

int Blocks(int64_t items) {
  return static_cast<int>(std::min((items + kThreads - 1) / kThreads, kMaxBlocks));
}

__device__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ int64_t GridThreads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// first[c] += the sum over rows r of terms(r * C + c, c).x, and second[c]
// (unless null) of its .y. first and second start at 0.
template <typename Terms>
__global__ void ColumnSumsKernel(Terms terms, double* first, double* second, int64_t rows,
                                 int64_t channels) {
  const int64_t c = static_cast<int64_t>(blockIdx.y) * kColumns + threadIdx.x;
  double a = 0.0, b = 0.0;
  if (c < channels) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * kRowLanes;
    for (int64_t r = static_cast<int64_t>(blockIdx.x) * kRowLanes + threadIdx.y; r < rows;
         r += stride) {
      const double2 t = terms(r * channels + c, c);
      a += t.x;
      b += t.y;
    }
  }
  __shared__ double shared[2][kRowLanes][kColumns];
  shared[0][threadIdx.y][threadIdx.x] = a;
  shared[1][threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  for (int lane = 1; lane < kRowLanes; ++lane) {
    a += shared[0][lane][threadIdx.x];
    b += shared[1][lane][threadIdx.x];
  }
  atomicAdd(&first[c], a);
  if (second != nullptr) atomicAdd(&second[c], b);
}

template <typename Terms>
Status ColumnSums(cudaStream_t stream, Terms terms, double* first, double* second, int64_t rows,
                  int64_t channels) {
  const int64_t column_blocks = (channels + kColumns - 1) / kColumns;
  if (column_blocks > kMaxBlocks) {  // CUDA's limit on gridDim.y
    return InvalidArgument(std::to_string(channels) + " columns are beyond the " +
                           std::to_string(kMaxBlocks * kColumns) + " a reduction takes");
  }
  const dim3 block(kColumns, kRowLanes);
  const dim3 grid(
      static_cast<unsigned>(std::min((rows + kRowLanes - 1) / kRowLanes, kMaxRowBlocks)),
      static_cast<unsigned>(column_blocks));
  ColumnSumsKernel<<<grid, block, 0, stream>>>(terms, first, second, rows, channels);
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

struct ValueTerms {  // x
  const float* x;
  __device__ double2 operator()(int64_t i, int64_t) const { return make_double2(x[i], 0.0); }
};

struct SquaredDeviationTerms {  // (x - mean)^2, mean = sums[c] / ROWS
  const float* x;
  const double* sums;
  double inv_rows;
  __device__ double2 operator()(int64_t i, int64_t c) const {
    const double d = x[i] - sums[c] * inv_rows;
    return make_double2(d * d, 0.0);
  }
};

struct GradientTerms {  // dy, dy * xhat
  const float* x;
  const float* dy;
  const float* mean;
  const double* inv_std;
  __device__ double2 operator()(int64_t i, int64_t c) const {
    const double g = dy[i];
    return make_double2(g, g * (x[i] - mean[c]) * inv_std[c]);
  }
};

__device__ double InverseStd(float variance, double epsilon) {
  return 1.0 / sqrt(fmax(static_cast<double>(variance), 0.0) + epsilon);
}

__global__ void MomentsKernel(const double* sums, float* mean, float* variance, int64_t rows,
                              int64_t channels) {
  const double n = static_cast<double>(rows);
  for (int64_t c = GlobalThread(); c < channels; c += GridThreads()) {
    mean[c] = static_cast<float>(sums[c] / n);
    variance[c] = static_cast<float>(sums[channels + c] / n);
  }
}

// scale = gamma * inv_std, shift = beta - mean * scale (as the CPU does).
__global__ void ScaleShiftKernel(const float* mean, const float* variance, const float* gamma,
                                 const float* beta, double epsilon, float* scale, float* shift,
                                 int64_t channels) {
  for (int64_t c = GlobalThread(); c < channels; c += GridThreads()) {
    scale[c] = static_cast<float>(gamma[c] * InverseStd(variance[c], epsilon));
    shift[c] = beta[c] - mean[c] * scale[c];
  }
}

__global__ void AffineKernel(const float* x, const float* scale, const float* shift, float* y,
                             int64_t rows, int64_t channels) {
  const int64_t n = rows * channels;
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const int64_t c = i % channels;
    y[i] = x[i] * scale[c] + shift[c];
  }
}

// inv_std, and coef = gamma * inv_std / ROWS (dx's factor).
__global__ void GradientFactorsKernel(const float* variance, const float* gamma, double epsilon,
                                      double* inv_std, double* coef, int64_t rows,
                                      int64_t channels) {
  for (int64_t c = GlobalThread(); c < channels; c += GridThreads()) {
    inv_std[c] = InverseStd(variance[c], epsilon);
    coef[c] = gamma[c] * inv_std[c] / static_cast<double>(rows);
  }
}

__global__ void ScaleShiftGradientsKernel(const double* sums, float* dgamma, float* dbeta,
                                          int64_t channels) {
  for (int64_t c = GlobalThread(); c < channels; c += GridThreads()) {
    dbeta[c] = static_cast<float>(sums[c]);
    dgamma[c] = static_cast<float>(sums[channels + c]);
  }
}

// dx = coef * (ROWS * dy - dbeta - xhat * dgamma), from the double sums.
__global__ void InputGradientKernel(const float* x, const float* dy, const float* mean,
                                    const double* sums, const double* inv_std, const double* coef,
                                    float* dx, int64_t rows, int64_t channels) {
  const int64_t n = rows * channels;
  const double count = static_cast<double>(rows);
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const int64_t c = i % channels;
    const double xhat = (x[i] - mean[c]) * inv_std[c];
    dx[i] = static_cast<float>(coef[c] * (count * dy[i] - sums[c] - xhat * sums[channels + c]));
  }
}

Status Launched() {
  PST_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

}  // namespace

Status CudaColumnMoments(cudaStream_t stream, const float* x, float* mean, float* variance,
                         double* scratch, int64_t rows, int64_t channels) {
  if (rows <= 0 || channels <= 0) return Status::OK();
  double* sums = scratch;  // the column sums, then the squared deviations'
  PST_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(sums, 0, 2 * channels * sizeof(double), stream));
  PST_RETURN_IF_ERROR(ColumnSums(stream, ValueTerms{x}, sums, nullptr, rows, channels));
  const SquaredDeviationTerms squares{x, sums, 1.0 / static_cast<double>(rows)};
  PST_RETURN_IF_ERROR(ColumnSums(stream, squares, sums + channels, nullptr, rows, channels));
  MomentsKernel<<<Blocks(channels), kThreads, 0, stream>>>(sums, mean, variance, rows, channels);
  return Launched();
}

Status CudaBatchNormForward(cudaStream_t stream, const float* x, const float* mean,
                            const float* variance, const float* gamma, const float* beta,
                            double epsilon, float* y, float* channel, int64_t rows,
                            int64_t channels) {
  if (rows <= 0 || channels <= 0) return Status::OK();
  float* scale = channel;
  float* shift = channel + channels;
  ScaleShiftKernel<<<Blocks(channels), kThreads, 0, stream>>>(mean, variance, gamma, beta, epsilon,
                                                              scale, shift, channels);
  PST_RETURN_IF_ERROR(Launched());
  AffineKernel<<<Blocks(rows * channels), kThreads, 0, stream>>>(x, scale, shift, y, rows,
                                                                 channels);
  return Launched();
}

Status CudaBatchNormBackward(cudaStream_t stream, const float* x, const float* dy,
                             const float* mean, const float* variance, const float* gamma,
                             double epsilon, float* dgamma, float* dbeta, float* dx,
                             double* scratch, int64_t rows, int64_t channels) {
  if (rows <= 0 || channels <= 0) return Status::OK();
  double* sums = scratch;  // sum dy, then sum dy * xhat
  double* inv_std = scratch + 2 * channels;
  double* coef = scratch + 3 * channels;
  GradientFactorsKernel<<<Blocks(channels), kThreads, 0, stream>>>(variance, gamma, epsilon,
                                                                   inv_std, coef, rows, channels);
  PST_RETURN_IF_ERROR(Launched());
  PST_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(sums, 0, 2 * channels * sizeof(double), stream));
  PST_RETURN_IF_ERROR(ColumnSums(stream, GradientTerms{x, dy, mean, inv_std}, sums, sums + channels,
                                 rows, channels));
  ScaleShiftGradientsKernel<<<Blocks(channels), kThreads, 0, stream>>>(sums, dgamma, dbeta,
                                                                       channels);
  PST_RETURN_IF_ERROR(Launched());
  if (dx == nullptr) return Status::OK();
  InputGradientKernel<<<Blocks(rows * channels), kThreads, 0, stream>>>(x, dy, mean, sums, inv_std,
                                                                        coef, dx, rows, channels);
  return Launched();
}

}  // namespace pst
