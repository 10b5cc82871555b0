// Layer: one step of a sequential model, mapping (B, in_dim) activations to
// (B, out_dim), with its backward pass.
//
// A layer holds no parameter values and no activations: the model passes
// them in, so a layer is a small description plus the math. The exception is
// what a backward pass needs beyond x and y (max-pool's argmax, dropout's
// mask): the layer keeps it from its latest training Forward, in buffers
// sized for the batch and reused. A layer borrows the Kernels it runs on;
// they must outlive it. Not thread-safe.
#ifndef PST_MODEL_LAYER_H_
#define PST_MODEL_LAYER_H_

#include <cstdint>
#include <vector>

#include "common/variable_spec.h"

namespace pst {

class Layer {
 public:
  virtual ~Layer() = default;

  virtual int64_t in_dim() const = 0;
  virtual int64_t out_dim() const = 0;

  // The variables the layer owns, in creation order (empty for activations).
  virtual std::vector<VariableSpec> Variables() const = 0;

  // x is (B,in_dim), y is (B,out_dim). params[k] holds Variables()[k].
  // `training` is true in a training step and false for inference (where,
  // e.g., dropout passes x through).
  virtual void Forward(const float* const* params, const float* x, float* y,
                       int64_t batch, bool training) = 0;

  // Follows a training Forward with the same params and x, which produced
  // y; dy is (B,out_dim). Writes grads[k] (shaped like Variables()[k]) and,
  // unless dx is null, dx (B,in_dim). Gradients are overwritten, not
  // accumulated.
  virtual void Backward(const float* const* params, const float* x,
                        const float* y, const float* dy, float* const* grads,
                        float* dx, int64_t batch) = 0;
};

}  // namespace pst

#endif  // PST_MODEL_LAYER_H_
