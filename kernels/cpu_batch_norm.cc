// CpuKernels' batch normalization (kernels.h): row-major passes over the
// (ROWS,C) matrix. A column's sum adds blocks of rows in float (which
// vectorizes) and the blocks' sums in double, so that a column of hundreds
// of thousands of values (a convolution's B*H*W) keeps its digits; the
// values summed are centred (x minus the column's first value or its mean),
// so a large common offset does not cost float digits either.
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

// sums[c] = the sum over rows r of term(r, c), a float.
template <typename Term>
std::vector<double> SumColumns(int64_t rows, int64_t channels, Term term) {
  constexpr int64_t kBlockRows = 64;
  std::vector<double> sums(channels, 0.0);
  std::vector<float> block(channels);
  for (int64_t first = 0; first < rows; first += kBlockRows) {
    std::fill(block.begin(), block.end(), 0.0f);
    const int64_t last = std::min(rows, first + kBlockRows);
    for (int64_t r = first; r < last; ++r) {
      for (int64_t c = 0; c < channels; ++c) block[c] += term(r, c);
    }
    for (int64_t c = 0; c < channels; ++c) sums[c] += block[c];
  }
  return sums;
}

}  // namespace

void CpuKernels::ColumnMoments(const float* x, float* mean, float* variance, int64_t rows,
                               int64_t channels) {
  if (rows <= 0) return;
  const double n = static_cast<double>(rows);
  // Each column's first value as its shift: the mean is shift + mean of
  // x - shift.
  const float* shift = x;
  const std::vector<double> shifted = SumColumns(
      rows, channels, [&](int64_t r, int64_t c) { return x[r * channels + c] - shift[c]; });
  for (int64_t c = 0; c < channels; ++c) mean[c] = static_cast<float>(shift[c] + shifted[c] / n);
  const std::vector<double> squares = SumColumns(rows, channels, [&](int64_t r, int64_t c) {
    const float d = x[r * channels + c] - mean[c];
    return d * d;
  });
  for (int64_t c = 0; c < channels; ++c) variance[c] = static_cast<float>(squares[c] / n);
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
  std::vector<double> sum_dy =
      SumColumns(rows, channels, [&](int64_t r, int64_t c) { return dy[r * channels + c]; });
  // sum dy * xhat = inv_std * sum dy * (x - mean).
  std::vector<double> sum_dy_xhat = SumColumns(rows, channels, [&](int64_t r, int64_t c) {
    const int64_t i = r * channels + c;
    return dy[i] * (x[i] - mean[c]);
  });
  for (int64_t c = 0; c < channels; ++c) {
    sum_dy_xhat[c] *= inv_std[c];
    dbeta[c] = static_cast<float>(sum_dy[c]);
    dgamma[c] = static_cast<float>(sum_dy_xhat[c]);
  }
  if (dx == nullptr) return;
  // dx = coef * (n * dy - dbeta - xhat * dgamma), coef = gamma * inv_std / n,
  // as dy * a + (x - mean) * b + d per column: float, which vectorizes (the
  // n * dy term dominates; the sums' terms are about sqrt(n) times smaller).
  const double n = static_cast<double>(rows);
  std::vector<float> a(channels), b(channels), d(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double coef = gamma[c] * inv_std[c] / n;
    a[c] = static_cast<float>(coef * n);
    b[c] = static_cast<float>(-coef * inv_std[c] * sum_dy_xhat[c]);
    d[c] = static_cast<float>(-coef * sum_dy[c]);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    const float* grad_out = dy + r * channels;
    float* grad_in = dx + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      grad_in[c] = grad_out[c] * a[c] + (in[c] - mean[c]) * b[c] + d[c];
    }
  }
}

}  // namespace pst
