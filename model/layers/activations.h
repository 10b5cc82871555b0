// Element-wise activation layers (no variables; in_dim == out_dim).
#ifndef PST_MODEL_LAYERS_ACTIVATIONS_H_
#define PST_MODEL_LAYERS_ACTIVATIONS_H_

#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

// y = 1 / (1 + exp(-x)), described as "sigmoid (dim)". `kernels` is
// borrowed and must outlive the layer.
class Sigmoid : public Layer {
 public:
  Sigmoid(int64_t dim, Kernels& kernels);

  int64_t in_dim() const override { return dim_; }
  int64_t out_dim() const override { return dim_; }
  std::string Describe() const override;
  std::vector<VariableSpec> Variables() const override { return {}; }
  InferenceOp Inference() const override;

  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

 private:
  const int64_t dim_;
  Kernels& kernels_;
};

// y = max(x, 0); the gradient at x == 0 is taken as 0. Described as
// "relu (dim)". `kernels` is borrowed and must outlive the layer.
class Relu : public Layer {
 public:
  Relu(int64_t dim, Kernels& kernels);

  int64_t in_dim() const override { return dim_; }
  int64_t out_dim() const override { return dim_; }
  std::string Describe() const override;
  std::vector<VariableSpec> Variables() const override { return {}; }
  InferenceOp Inference() const override;

  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

 private:
  const int64_t dim_;
  Kernels& kernels_;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_ACTIVATIONS_H_
