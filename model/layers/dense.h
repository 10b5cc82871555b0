// Dense: y = x*w + b, with w (in,out) glorot-uniform and b (out) zeros,
// named "<name>/weights" and "<name>/bias".
#ifndef PST_MODEL_LAYERS_DENSE_H_
#define PST_MODEL_LAYERS_DENSE_H_

#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

class Dense : public Layer {
 public:
  // `kernels` is borrowed and must outlive the layer.
  Dense(std::string name, int64_t in, int64_t out, Kernels& kernels);

  int64_t in_dim() const override { return in_; }
  int64_t out_dim() const override { return out_; }
  std::string Describe() const override;  // "dense0 (Dense 784->256)"
  std::vector<VariableSpec> Variables() const override;
  InferenceOp Inference() const override;

  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

 private:
  const std::string name_;
  const int64_t in_;
  const int64_t out_;
  Kernels& kernels_;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_DENSE_H_
