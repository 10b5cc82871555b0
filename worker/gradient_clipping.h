// Clipping a worker's gradient by its global norm, as
// tf.clip_by_global_norm: the norm is taken over every gradient of the step
// together, sqrt(sum of all squares), and when it exceeds clip_norm every
// gradient is scaled by clip_norm / norm, so the step keeps its direction and
// its length is at most clip_norm.
//
// The row gradients of embedding tables count like the others: the model
// sums a batch's duplicate ids, so the [n, dim] tensor is the dense
// gradient's non-zero rows and its norm is theirs.
//
// A non-finite norm (a NaN or an infinity in some gradient: a sum of finite
// float squares cannot overflow a double) leaves the gradients unchanged,
// where TensorFlow would fill them with NaN: the worker's divergence check
// (worker/divergence.h) then names the variable and ends the run.
//
// A moving average's delta (batch norm's statistics,
// VariableSpec::moving_average) is not a gradient: it is neither counted
// nor scaled.
#ifndef PST_WORKER_GRADIENT_CLIPPING_H_
#define PST_WORKER_GRADIENT_CLIPPING_H_

#include <vector>

#include "common/tensor.h"

namespace pst {

struct ClipResult {
  double global_norm = 0;  // before clipping; NaN or infinity if not finite
  bool clipped = false;    // the gradients were scaled down
};

// grads: float32 tensors, scaled in place (none may still be shared with a
// send). clip_norm > 0. moving_averages[i] true: grads[i] is a moving
// average's delta, left alone; grads past its end are gradients.
ClipResult ClipByGlobalNorm(float clip_norm, std::vector<Tensor>* grads,
                            const std::vector<bool>& moving_averages = {});

}  // namespace pst

#endif  // PST_WORKER_GRADIENT_CLIPPING_H_
