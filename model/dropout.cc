#include "model/dropout.h"

#include <glog/logging.h>

#include <cmath>

namespace pst {

Dropout::Dropout(int64_t dim, double rate, uint64_t seed, Kernels& kernels)
    : dim_(dim), rate_(rate), kernels_(kernels), rng_(seed) {
  CHECK_GT(dim_, 0);
  CHECK(rate_ >= 0 && rate_ < 1) << "dropout rate " << rate_;
}

void Dropout::Forward(const float* const* /*params*/, const float* x, float* y,
                      int64_t batch, bool training) {
  const int64_t n = batch * dim_;
  if (!training) {
    kernels_.Copy(x, y, n);
    return;
  }
  // Not std::bernoulli_distribution, whose algorithm differs between
  // standard libraries: an element is dropped when the top 24 bits of a
  // draw, as u in [0, 1), fall below rate.
  const uint64_t threshold =
      static_cast<uint64_t>(std::llround(rate_ * 0x1p24));
  const float scale = static_cast<float>(1.0 / (1.0 - rate_));
  mask_.resize(n);  // keeps the capacity
  for (float& m : mask_) m = (rng_() >> 40) < threshold ? 0.0f : scale;
  kernels_.Multiply(x, mask_.data(), y, n);
}

void Dropout::Backward(const float* const* /*params*/, const float* /*x*/,
                       const float* /*y*/, const float* dy,
                       float* const* /*grads*/, float* dx, int64_t batch) {
  CHECK_EQ(static_cast<int64_t>(mask_.size()), batch * dim_)
      << "Backward without a training Forward on this batch";
  if (dx != nullptr) kernels_.Multiply(dy, mask_.data(), dx, batch * dim_);
}

}  // namespace pst
