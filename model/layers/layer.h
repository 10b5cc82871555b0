// Layer: one step of a sequential model, mapping (B, in_dim) activations to
// (B, out_dim), with its backward pass.
//
// A layer holds no parameter values and no activations: the model passes
// them in, so a layer is a small description plus the math. Every pointer
// it is given lies in the memory of the Kernels it runs on (device memory on
// a GPU). The exception is what a backward pass needs beyond x and y
// (max-pool's argmax, dropout's mask): the layer keeps it from its latest
// training Forward, in buffers it allocates through its Kernels in
// Reserve(). A layer borrows the Kernels it runs on; they must outlive it.
// Not thread-safe.
#ifndef PST_MODEL_LAYERS_LAYER_H_
#define PST_MODEL_LAYERS_LAYER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/variable_spec.h"
#include "kernels/kernels.h"

namespace pst {

// What a layer computes at inference, for exporters (ONNX): its operation
// and, for the image operations, their geometry. Parameters follow the
// layer's Variables(); dropout is the identity at inference.
struct InferenceOp {
  enum class Kind { kDense, kConv2D, kMaxPool2x2, kRelu, kSigmoid, kIdentity, kBatchNorm };
  Kind kind = Kind::kIdentity;
  // kConv2D: the convolution. kMaxPool2x2: the image it pools (height,
  // width, in_channels); the window is 2x2 with stride 2. kBatchNorm: the
  // image it normalizes per channel (height, width, in_channels), or 1x1xC
  // for C features.
  Conv2DShape image;
  // kBatchNorm: added to the variance. Its variables are gamma, beta, the
  // moving mean and the moving variance (BatchNorm::Variables()).
  double epsilon = 0;
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual int64_t in_dim() const = 0;
  virtual int64_t out_dim() const = 0;

  // What the layer is, for placement logs: "conv0 (Conv2D 5x5x1->20)".
  virtual std::string Describe() const = 0;

  // The variables the layer owns, in creation order (empty for activations).
  virtual std::vector<VariableSpec> Variables() const = 0;

  virtual InferenceOp Inference() const = 0;

  // Sizes the layer's own buffers (if it has any) for batches of up to
  // `batch` examples; allocates only when they grow. Forward on a larger
  // batch is a broken invariant (CHECKed). Errors: the Kernels' Allocate.
  virtual Status Reserve(int64_t /*batch*/) { return Status::OK(); }

  // x is (B,in_dim), y is (B,out_dim). params[k] holds Variables()[k].
  // `training` is true in a training step and false for inference (where,
  // e.g., dropout passes x through).
  virtual void Forward(const float* const* params, const float* x, float* y, int64_t batch,
                       bool training) = 0;

  // Follows a training Forward with the same params and x, which produced
  // y; dy is (B,out_dim). Writes grads[k] (shaped like Variables()[k]) and,
  // unless dx is null, dx (B,in_dim). Gradients are overwritten, not
  // accumulated.
  virtual void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                        float* const* grads, float* dx, int64_t batch) = 0;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_LAYER_H_
