#include "model/layers/max_pool.h"

#include <glog/logging.h>

#include <limits>
#include <string>

#include "model/ensure_buffer.h"

namespace pst {

MaxPool2x2::MaxPool2x2(int64_t height, int64_t width, int64_t channels, Kernels& kernels)
    : height_(height), width_(width), channels_(channels), kernels_(kernels) {
  CHECK_GE(height_, 2);
  CHECK_GE(width_, 2);
  CHECK_GT(channels_, 0);
}

std::string MaxPool2x2::Describe() const {
  const auto image = [this](int64_t h, int64_t w) {
    return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(channels_);
  };
  return "max_pool (2x2, " + image(height_, width_) + "->" + image(height_ / 2, width_ / 2) + ")";
}

InferenceOp MaxPool2x2::Inference() const {
  InferenceOp op{InferenceOp::Kind::kMaxPool2x2, {}};
  op.image.height = height_;
  op.image.width = width_;
  op.image.in_channels = channels_;
  return op;
}

Status MaxPool2x2::Reserve(int64_t batch) {
  argmax_batch_ = 0;  // a new buffer holds no argmax
  return EnsureBuffer(kernels_, batch * out_dim() * sizeof(int32_t), &argmax_);
}

void MaxPool2x2::Forward(const float* const* /*params*/, const float* x, float* y, int64_t batch,
                         bool training) {
  // The argmax indexes the whole batch's x in int32.
  CHECK_LT(batch * in_dim(), int64_t{std::numeric_limits<int32_t>::max()});
  CHECK(argmax_ != nullptr && argmax_->bytes() >= batch * out_dim() * sizeof(int32_t))
      << "Forward on a batch of " << batch << " beyond Reserve()";
  kernels_.MaxPool2x2Forward(x, y, argmax_->i32(), batch, height_, width_, channels_);
  argmax_batch_ = training ? batch : 0;
}

void MaxPool2x2::Backward(const float* const* /*params*/, const float* /*x*/, const float* /*y*/,
                          const float* dy, float* const* /*grads*/, float* dx, int64_t batch) {
  CHECK_EQ(argmax_batch_, batch) << "Backward without a training Forward on this batch";
  if (dx != nullptr) {
    kernels_.MaxPool2x2Backward(dy, argmax_->i32(), dx, batch, height_, width_, channels_);
  }
}

}  // namespace pst
