#include "model/layers/softmax_rows.h"

#include <algorithm>
#include <cmath>

namespace pst {

void SoftmaxRows(float* x, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    const float max = *std::max_element(row, row + cols);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += row[c] = std::exp(row[c] - max);
    for (int64_t c = 0; c < cols; ++c) row[c] = static_cast<float>(row[c] / sum);
  }
}

}  // namespace pst
