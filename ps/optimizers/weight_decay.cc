#include "ps/optimizers/weight_decay.h"

#include <glog/logging.h>

namespace pst {

bool DecaysWeight(const VariableSpec& spec) {
  return spec.dtype == DType::kFloat32 && spec.shape.size() >= 2;
}

void ApplyWeightDecay(float* var, int64_t n, float lr, float weight_decay) {
  CHECK_GE(lr, 0);
  CHECK_GE(weight_decay, 0);
  const float keep = 1.0f - lr * weight_decay;
  for (int64_t i = 0; i < n; ++i) var[i] *= keep;
}

}  // namespace pst
