#include "worker/gradient_clipping.h"

#include <glog/logging.h>

#include <cmath>

namespace pst {

ClipResult ClipByGlobalNorm(float clip_norm, std::vector<Tensor>* grads) {
  CHECK_GT(clip_norm, 0);
  double sum_of_squares = 0;
  for (const Tensor& g : *grads) {
    CHECK(g.dtype() == DType::kFloat32);
    const float* x = g.f32();
    for (int64_t i = 0, n = g.num_elements(); i < n; ++i) sum_of_squares += double{x[i]} * x[i];
  }
  ClipResult result;
  result.global_norm = std::sqrt(sum_of_squares);
  if (!std::isfinite(result.global_norm) || result.global_norm <= clip_norm) return result;
  const float scale = static_cast<float>(clip_norm / result.global_norm);
  for (Tensor& g : *grads) {
    float* x = g.f32();
    for (int64_t i = 0, n = g.num_elements(); i < n; ++i) x[i] *= scale;
  }
  result.clipped = true;
  return result;
}

}  // namespace pst
