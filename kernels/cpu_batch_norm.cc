// CpuKernels' batch normalization (kernels.h): row-major passes over the
// (ROWS,C) matrix with per-column sums in double, so that a column of
// hundreds of thousands of values (a convolution's B*H*W) loses no digits.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu_kernels.h"

namespace pst {
namespace {

// 1 / sqrt(max(variance, 0) + epsilon) per column.
std::vector<double> InverseStd(const float* variance, double epsilon, int64_t channels) {
  std::vector<double> inv_std(channels);
  for (int64_t c = 0; c < channels; ++c) {
    inv_std[c] = 1.0 / std::sqrt(std::max(double{variance[c]}, 0.0) + epsilon);
  }
  return inv_std;
}

}  // namespace

void CpuKernels::ColumnMoments(const float* x, float* mean, float* variance, int64_t rows,
                               int64_t channels) {
  std::vector<double> sums(channels, 0.0), squares(channels, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c) sums[c] += row[c];
  }
  const double n = static_cast<double>(rows);
  for (double& s : sums) s /= n;  // now the means
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double d = row[c] - sums[c];
      squares[c] += d * d;
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    mean[c] = static_cast<float>(sums[c]);
    variance[c] = static_cast<float>(squares[c] / n);
  }
}

void CpuKernels::BatchNormForward(const float* x, const float* mean, const float* variance,
                                  const float* gamma, const float* beta, double epsilon, float* y,
                                  int64_t rows, int64_t channels) {
  const std::vector<double> inv_std = InverseStd(variance, epsilon, channels);
  std::vector<float> scale(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    scale[c] = static_cast<float>(gamma[c] * inv_std[c]);
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    float* out = y + r * channels;
    for (int64_t c = 0; c < channels; ++c) out[c] = in[c] * scale[c] + shift[c];
  }
}

void CpuKernels::BatchNormBackward(const float* x, const float* dy, const float* mean,
                                   const float* variance, const float* gamma, double epsilon,
                                   float* dgamma, float* dbeta, float* dx, int64_t rows,
                                   int64_t channels) {
  const std::vector<double> inv_std = InverseStd(variance, epsilon, channels);
  std::vector<double> sum_dy(channels, 0.0), sum_dy_xhat(channels, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    const float* grad_out = dy + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      sum_dy[c] += grad_out[c];
      sum_dy_xhat[c] += double{grad_out[c]} * (in[c] - mean[c]) * inv_std[c];
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    dbeta[c] = static_cast<float>(sum_dy[c]);
    dgamma[c] = static_cast<float>(sum_dy_xhat[c]);
  }
  if (dx == nullptr) return;
  const double n = static_cast<double>(rows);
  std::vector<double> coef(channels);  // gamma * inv_std / n: no division per element
  for (int64_t c = 0; c < channels; ++c) coef[c] = gamma[c] * inv_std[c] / n;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    const float* grad_out = dy + r * channels;
    float* grad_in = dx + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double xhat = (in[c] - mean[c]) * inv_std[c];
      grad_in[c] =
          static_cast<float>(coef[c] * (n * grad_out[c] - sum_dy[c] - xhat * sum_dy_xhat[c]));
    }
  }
}

}  // namespace pst
