// Conv2D: a 2-D convolution plus bias (Kernels::Conv2DForward) on images
// stored NHWC, one image per row: in_dim is H*W*C and out_dim P*Q*K. The
// filters w (R,S,C,K) are glorot-uniform (fan_in R*S*C, fan_out R*S*K) and
// the bias b (K) zeros, named "<name>/weights" and "<name>/bias".
#ifndef PST_MODEL_LAYERS_CONV2D_H_
#define PST_MODEL_LAYERS_CONV2D_H_

#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

class Conv2D : public Layer {
 public:
  // `shape` must give a non-empty output (CHECKed). `kernels` is borrowed
  // and must outlive the layer.
  Conv2D(std::string name, const Conv2DShape& shape, Kernels& kernels);

  int64_t in_dim() const override;
  int64_t out_dim() const override;
  // "conv0 (Conv2D 5x5x1->20)", plus ", stride S" and ", padding P" when
  // not 1 and 0.
  std::string Describe() const override;
  std::vector<VariableSpec> Variables() const override;
  InferenceOp Inference() const override;

  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

 private:
  const std::string name_;
  const Conv2DShape shape_;
  Kernels& kernels_;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_CONV2D_H_
