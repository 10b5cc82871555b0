#include "model/max_pool.h"

#include <glog/logging.h>

#include <limits>

namespace pst {

MaxPool2x2::MaxPool2x2(int64_t height, int64_t width, int64_t channels,
                       Kernels& kernels)
    : height_(height), width_(width), channels_(channels), kernels_(kernels) {
  CHECK_GE(height_, 2);
  CHECK_GE(width_, 2);
  CHECK_GT(channels_, 0);
}

void MaxPool2x2::Forward(const float* const* /*params*/, const float* x,
                         float* y, int64_t batch, bool /*training*/) {
  // The argmax indexes the whole batch's x in int32.
  CHECK_LT(batch * in_dim(), int64_t{std::numeric_limits<int32_t>::max()});
  argmax_.resize(batch * out_dim());  // keeps the capacity
  kernels_.MaxPool2x2Forward(x, y, argmax_.data(), batch, height_, width_,
                             channels_);
}

void MaxPool2x2::Backward(const float* const* /*params*/, const float* /*x*/,
                          const float* /*y*/, const float* dy,
                          float* const* /*grads*/, float* dx, int64_t batch) {
  CHECK_EQ(static_cast<int64_t>(argmax_.size()), batch * out_dim())
      << "Backward without a Forward on this batch";
  if (dx != nullptr) {
    kernels_.MaxPool2x2Backward(dy, argmax_.data(), dx, batch, height_, width_,
                                channels_);
  }
}

}  // namespace pst
