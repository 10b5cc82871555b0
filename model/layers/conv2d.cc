#include "model/layers/conv2d.h"

#include <glog/logging.h>

#include <string>
#include <utility>

namespace pst {
namespace {

// Indices into params/grads, in the order Variables() declares them.
constexpr int kWeights = 0;
constexpr int kBias = 1;

}  // namespace

Conv2D::Conv2D(std::string name, const Conv2DShape& shape, Kernels& kernels)
    : name_(std::move(name)), shape_(shape), kernels_(kernels) {
  CHECK_GT(shape_.in_channels, 0) << name_;
  CHECK_GT(shape_.out_channels, 0) << name_;
  CHECK_GT(shape_.filter_height, 0) << name_;
  CHECK_GT(shape_.filter_width, 0) << name_;
  CHECK_GT(shape_.stride, 0) << name_;
  CHECK_GE(shape_.padding, 0) << name_;
  CHECK_GT(shape_.out_height(), 0) << name_ << ": filter taller than input";
  CHECK_GT(shape_.out_width(), 0) << name_ << ": filter wider than input";
}

int64_t Conv2D::in_dim() const { return shape_.height * shape_.width * shape_.in_channels; }

int64_t Conv2D::out_dim() const {
  return shape_.out_height() * shape_.out_width() * shape_.out_channels;
}

std::string Conv2D::Describe() const {
  std::string s = name_ + " (Conv2D " + std::to_string(shape_.filter_height) + "x" +
                  std::to_string(shape_.filter_width) + "x" + std::to_string(shape_.in_channels) +
                  "->" + std::to_string(shape_.out_channels);
  if (shape_.stride != 1) s += ", stride " + std::to_string(shape_.stride);
  if (shape_.padding != 0) s += ", padding " + std::to_string(shape_.padding);
  return s + ")";
}

InferenceOp Conv2D::Inference() const { return {InferenceOp::Kind::kConv2D, shape_}; }

std::vector<VariableSpec> Conv2D::Variables() const {
  // HWIO: the initializer's fan rule for rank >= 3 (fan_in = R*S*C, fan_out
  // = R*S*K) assumes exactly this layout.
  return {
      {name_ + "/weights",
       DType::kFloat32,
       {shape_.filter_height, shape_.filter_width, shape_.in_channels, shape_.out_channels},
       Initializer::kGlorotUniform},
      {name_ + "/bias", DType::kFloat32, {shape_.out_channels}, Initializer::kZeros},
  };
}

void Conv2D::Forward(const float* const* params, const float* x, float* y, int64_t batch,
                     bool /*training*/) {
  kernels_.Conv2DForward(x, params[kWeights], params[kBias], y, shape_, batch);
}

void Conv2D::Backward(const float* const* params, const float* x, const float* /*y*/,
                      const float* dy, float* const* grads, float* dx, int64_t batch) {
  kernels_.Conv2DBackwardWeights(x, dy, grads[kWeights], shape_, batch);
  // NHWC: dy is a (B*P*Q, K) matrix whose column sums are the bias gradient.
  kernels_.BiasBackward(dy, grads[kBias], batch * shape_.out_height() * shape_.out_width(),
                        shape_.out_channels);
  if (dx != nullptr) {
    kernels_.Conv2DBackwardInput(dy, params[kWeights], dx, shape_, batch);
  }
}

}  // namespace pst
