#include "worker/gradient_clipping.h"

#include <glog/logging.h>

#include <cmath>

namespace pst {

ClipResult ClipByGlobalNorm(float clip_norm, std::vector<Tensor>* grads,
                            const std::vector<bool>& moving_averages) {
  CHECK_GT(clip_norm, 0);
  const auto is_gradient = [&](size_t i) {
    return i >= moving_averages.size() || !moving_averages[i];
  };
  double sum_of_squares = 0;
  for (size_t k = 0; k < grads->size(); ++k) {
    if (!is_gradient(k)) continue;
    const Tensor& g = (*grads)[k];
    CHECK(g.dtype() == DType::kFloat32);
    const float* x = g.f32();
    for (int64_t i = 0, n = g.num_elements(); i < n; ++i) sum_of_squares += double{x[i]} * x[i];
  }
  ClipResult result;
  result.global_norm = std::sqrt(sum_of_squares);
  if (!std::isfinite(result.global_norm) || result.global_norm <= clip_norm) return result;
  const float scale = static_cast<float>(clip_norm / result.global_norm);
  for (size_t k = 0; k < grads->size(); ++k) {
    if (!is_gradient(k)) continue;
    Tensor& g = (*grads)[k];
    float* x = g.f32();
    for (int64_t i = 0, n = g.num_elements(); i < n; ++i) x[i] *= scale;
  }
  result.clipped = true;
  return result;
}

}  // namespace pst
