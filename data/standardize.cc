#include "data/standardize.h"

#include <cmath>

namespace pst {

Standardization FitStandardization(const Dataset& train) {
  const int64_t d = train.feature_dim;
  std::vector<double> sum(d, 0.0), sum_sq(d, 0.0);
  for (int64_t i = 0; i < train.size; ++i) {
    const float* row = train.features.data() + i * d;
    for (int64_t j = 0; j < d; ++j) {
      sum[j] += row[j];
      sum_sq[j] += double{row[j]} * row[j];
    }
  }
  Standardization s;
  s.mean.resize(d);
  s.scale.resize(d);
  const double n = train.size > 0 ? static_cast<double>(train.size) : 1.0;
  for (int64_t j = 0; j < d; ++j) {
    const double mean = sum[j] / n;
    const double variance = std::max(0.0, sum_sq[j] / n - mean * mean);
    s.mean[j] = static_cast<float>(mean);
    s.scale[j] = variance > 0 ? static_cast<float>(1.0 / std::sqrt(variance)) : 1.0f;
  }
  return s;
}

void StandardizeRows(const Standardization& s, std::vector<float>* rows) {
  const size_t d = s.mean.size();
  if (d == 0) return;  // no dense features (libsvm)
  for (size_t begin = 0; begin + d <= rows->size(); begin += d) {
    float* row = rows->data() + begin;
    for (size_t j = 0; j < d; ++j) row[j] = (row[j] - s.mean[j]) * s.scale[j];
  }
}

void Standardize(const Standardization& s, Dataset* data) { StandardizeRows(s, &data->features); }

}  // namespace pst
