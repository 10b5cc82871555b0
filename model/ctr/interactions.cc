#include "model/ctr/interactions.h"

#include <algorithm>
#include <vector>

namespace pst {

void FmForward(const float* v, int64_t batch, int64_t n, int64_t dim, float* y) {
  // Per-lane sums, added up once per example: a scalar running sum of the
  // squares would keep the compiler from vectorizing the inner loop.
  std::vector<float> sum(dim), squares(dim);
  for (int64_t b = 0; b < batch; ++b) {
    const float* vb = v + b * n * dim;
    std::fill(sum.begin(), sum.end(), 0.0f);
    std::fill(squares.begin(), squares.end(), 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < dim; ++c) {
        const float x = vb[i * dim + c];
        sum[c] += x;
        squares[c] += x * x;
      }
    }
    float total = 0;
    for (int64_t c = 0; c < dim; ++c) total += sum[c] * sum[c] - squares[c];
    y[b] = 0.5f * total;
  }
}

void FmBackward(const float* v, const float* dy, int64_t batch, int64_t n, int64_t dim, float* dv) {
  std::vector<float> sum(dim);
  for (int64_t b = 0; b < batch; ++b) {
    const float* vb = v + b * n * dim;
    float* dvb = dv + b * n * dim;
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < dim; ++c) sum[c] += vb[i * dim + c];
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < dim; ++c) dvb[i * dim + c] += dy[b] * (sum[c] - vb[i * dim + c]);
    }
  }
}

void DotForward(const float* v, int64_t batch, int64_t n, int64_t dim, float* y) {
  const int64_t pairs = DotPairs(n);
  for (int64_t b = 0; b < batch; ++b) {
    const float* vb = v + b * n * dim;
    float* yb = y + b * pairs;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        float dot = 0;
        for (int64_t c = 0; c < dim; ++c) dot += vb[i * dim + c] * vb[j * dim + c];
        *yb++ = dot;
      }
    }
  }
}

void DotBackward(const float* v, const float* dy, int64_t batch, int64_t n, int64_t dim,
                 float* dv) {
  const int64_t pairs = DotPairs(n);
  for (int64_t b = 0; b < batch; ++b) {
    const float* vb = v + b * n * dim;
    const float* dyb = dy + b * pairs;
    float* dvb = dv + b * n * dim;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        const float g = *dyb++;
        for (int64_t c = 0; c < dim; ++c) {
          dvb[i * dim + c] += g * vb[j * dim + c];
          dvb[j * dim + c] += g * vb[i * dim + c];
        }
      }
    }
  }
}

}  // namespace pst
