#include "model/layers/dropout.h"

#include <glog/logging.h>

#include <cmath>
#include <sstream>

#include "model/ensure_buffer.h"

namespace pst {

Dropout::Dropout(int64_t dim, double rate, uint64_t seed, Kernels& kernels)
    : dim_(dim), rate_(rate), kernels_(kernels), rng_(seed) {
  CHECK_GT(dim_, 0);
  CHECK(rate_ >= 0 && rate_ < 1) << "dropout rate " << rate_;
}

std::string Dropout::Describe() const {
  std::ostringstream s;
  s << "dropout (rate " << rate_ << ", " << dim_ << ")";
  return s.str();
}

InferenceOp Dropout::Inference() const { return {InferenceOp::Kind::kIdentity, {}}; }

Status Dropout::Reserve(int64_t batch) {
  const int64_t n = batch * dim_;
  mask_batch_ = 0;  // a new buffer holds no mask
  return EnsureBuffer(kernels_, n * sizeof(float), &mask_);
}

void Dropout::Forward(const float* const* /*params*/, const float* x, float* y, int64_t batch,
                      bool training) {
  const int64_t n = batch * dim_;
  mask_batch_ = 0;
  if (!training) {
    kernels_.Copy(x, y, n);
    return;
  }
  CHECK(mask_ != nullptr && mask_->bytes() >= n * sizeof(float))
      << "Forward on a batch of " << batch << " beyond Reserve()";
  // An element is dropped when the top 24 bits of its draw, as u in
  // [0, 1), fall below rate.
  const auto threshold = static_cast<uint32_t>(std::llround(rate_ * 0x1p24));
  const float scale = static_cast<float>(1.0 / (1.0 - rate_));
  // One draw of the generator per step seeds the back end's mask kernel.
  kernels_.DropoutMask(rng_(), threshold, scale, mask_->f32(), n);
  kernels_.Multiply(x, mask_->f32(), y, n);
  mask_batch_ = batch;
}

void Dropout::Backward(const float* const* /*params*/, const float* /*x*/, const float* /*y*/,
                       const float* dy, float* const* /*grads*/, float* dx, int64_t batch) {
  CHECK_EQ(mask_batch_, batch) << "Backward without a training Forward on this batch";
  if (dx != nullptr) kernels_.Multiply(dy, mask_->f32(), dx, batch * dim_);
}

}  // namespace pst
