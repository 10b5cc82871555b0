// Decoupled weight decay (Loshchilov & Hutter, "Decoupled Weight Decay
// Regularization"; AdamW, SGDW): each update also shrinks the weights,
//   w -= lr * weight_decay * w
// apart from the gradient, so Adam's per-coordinate scaling does not weaken
// it as it weakens an L2 term added to the loss. lr is the rate of this very
// update, scheduled: as Keras' AdamW and PyTorch's AdamW multiply the decay
// by the current (scheduled) learning rate, the decay follows the schedule.
//
// What decays: the weights of a layer (dense weights [in, out], conv
// filters [h, w, in, out]: rank >= 2). Not biases ("<layer>/bias", rank 1)
// nor anything of rank < 2 (the global step, a future norm's scale and
// offset), as is common practice: decaying them only restricts the model.
// Embedding tables (ps/sparse/) are not VariableSpecs and do not decay: a
// row would shrink only when a batch touches it.
//
// Use (when wired): the ps, for each variable with DecaysWeight(spec), calls
//   ApplyWeightDecay(var, n, config.learning_rate * lr_scale, weight_decay)
// right before optimizer->Apply(var, grad, n, lr_scale, slots) under the
// same variable lock, lr_scale being the one Apply gets (schedule times
// staleness scale). Before, not after: the paper's step decays the weights
// the gradient was computed at, and Keras and PyTorch do the same (after
// would differ by lr * weight_decay * update). A dropped stale gradient
// (no Apply) decays nothing.
#ifndef PST_PS_OPTIMIZERS_WEIGHT_DECAY_H_
#define PST_PS_OPTIMIZERS_WEIGHT_DECAY_H_

#include <cstdint>

#include "common/variable_spec.h"

namespace pst {

// True for a float32 variable of rank >= 2.
bool DecaysWeight(const VariableSpec& spec);

// var[i] *= 1 - lr * weight_decay for i in [0, n). lr and weight_decay >= 0.
void ApplyWeightDecay(float* var, int64_t n, float lr, float weight_decay);

}  // namespace pst

#endif  // PST_PS_OPTIMIZERS_WEIGHT_DECAY_H_
