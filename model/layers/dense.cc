#include "model/layers/dense.h"

#include <glog/logging.h>

#include <string>
#include <utility>

namespace pst {
namespace {

// Indices into params/grads, in the order Variables() declares them.
constexpr int kWeights = 0;
constexpr int kBias = 1;

}  // namespace

Dense::Dense(std::string name, int64_t in, int64_t out, Kernels& kernels)
    : name_(std::move(name)), in_(in), out_(out), kernels_(kernels) {
  CHECK_GT(in_, 0);
  CHECK_GT(out_, 0);
}

std::string Dense::Describe() const {
  return name_ + " (Dense " + std::to_string(in_) + "->" + std::to_string(out_) + ")";
}

InferenceOp Dense::Inference() const { return {InferenceOp::Kind::kDense, {}}; }

std::vector<VariableSpec> Dense::Variables() const {
  return {
      {name_ + "/weights", DType::kFloat32, {in_, out_}, Initializer::kGlorotUniform},
      {name_ + "/bias", DType::kFloat32, {out_}, Initializer::kZeros},
  };
}

void Dense::Forward(const float* const* params, const float* x, float* y, int64_t batch,
                    bool /*training*/) {
  kernels_.MatmulForward(x, params[kWeights], params[kBias], y, batch, in_, out_);
}

void Dense::Backward(const float* const* params, const float* x, const float* /*y*/,
                     const float* dy, float* const* grads, float* dx, int64_t batch) {
  kernels_.MatmulBackwardWeights(x, dy, grads[kWeights], batch, in_, out_);
  kernels_.BiasBackward(dy, grads[kBias], batch, out_);
  // The first layer's dx is not needed, and is its largest product.
  if (dx != nullptr) {
    kernels_.MatmulBackwardInput(dy, params[kWeights], dx, batch, in_, out_);
  }
}

}  // namespace pst
