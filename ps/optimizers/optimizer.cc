// What every optimizer shares: a bfloat16 gradient applied as its widened
// float32 copy.
#include "ps/optimizers/optimizer.h"

#include "common/bfloat16.h"

namespace pst {

void Optimizer::ApplyBFloat16(float* var, const uint16_t* grad, int64_t n, float lr_scale,
                              SlotSet* slots, std::vector<float>* scratch) const {
  scratch->resize(n);
  BFloat16ToFloat(grad, scratch->data(), n);
  Apply(var, scratch->data(), n, lr_scale, slots);
}

}  // namespace pst
