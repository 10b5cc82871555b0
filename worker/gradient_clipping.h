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
// Use (when wired): WorkerTask::Step and ClickStep call
//   ClipByGlobalNorm(clip_norm, &grads_)
// right after Model::ComputeGradients (in ClickStep before the row
// gradients are split off) and before NonFiniteStep, when --clip_norm > 0;
// the norm goes to the step's metrics (a practitioner tunes clip_norm from
// it).
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
// send). clip_norm > 0.
ClipResult ClipByGlobalNorm(float clip_norm, std::vector<Tensor>* grads);

}  // namespace pst

#endif  // PST_WORKER_GRADIENT_CLIPPING_H_
