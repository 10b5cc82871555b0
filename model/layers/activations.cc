#include "model/layers/activations.h"

#include <glog/logging.h>

#include <string>

namespace pst {

Sigmoid::Sigmoid(int64_t dim, Kernels& kernels) : dim_(dim), kernels_(kernels) {
  CHECK_GT(dim_, 0);
}

std::string Sigmoid::Describe() const { return "sigmoid (" + std::to_string(dim_) + ")"; }

InferenceOp Sigmoid::Inference() const { return {InferenceOp::Kind::kSigmoid, {}}; }

void Sigmoid::Forward(const float* const* /*params*/, const float* x, float* y, int64_t batch,
                      bool /*training*/) {
  kernels_.SigmoidForward(x, y, batch * dim_);
}

void Sigmoid::Backward(const float* const* /*params*/, const float* /*x*/, const float* y,
                       const float* dy, float* const* /*grads*/, float* dx, int64_t batch) {
  if (dx != nullptr) kernels_.SigmoidBackward(y, dy, dx, batch * dim_);
}

Relu::Relu(int64_t dim, Kernels& kernels) : dim_(dim), kernels_(kernels) { CHECK_GT(dim_, 0); }

std::string Relu::Describe() const { return "relu (" + std::to_string(dim_) + ")"; }

InferenceOp Relu::Inference() const { return {InferenceOp::Kind::kRelu, {}}; }

void Relu::Forward(const float* const* /*params*/, const float* x, float* y, int64_t batch,
                   bool /*training*/) {
  kernels_.ReluForward(x, y, batch * dim_);
}

void Relu::Backward(const float* const* /*params*/, const float* x, const float* /*y*/,
                    const float* dy, float* const* /*grads*/, float* dx, int64_t batch) {
  if (dx != nullptr) kernels_.ReluBackward(x, dy, dx, batch * dim_);
}

}  // namespace pst
