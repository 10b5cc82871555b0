#include "model/layers/batch_norm.h"

#include <glog/logging.h>

#include <utility>

namespace pst {
namespace {

// Indices into params/grads, in the order Variables() declares them.
constexpr int kGamma = 0;
constexpr int kBeta = 1;
constexpr int kMovingMean = 2;
constexpr int kMovingVariance = 3;

}  // namespace

BatchNorm::BatchNorm(std::string name, const InputShape& shape, Kernels& kernels,
                     BatchNormOptions options)
    : name_(std::move(name)),
      shape_(shape),
      channels_(shape.channels()),
      options_(options),
      kernels_(kernels) {
  CHECK_GT(shape_.size(), 0) << name_;
  CHECK(options_.momentum >= 0 && options_.momentum < 1)
      << name_ << ": momentum " << options_.momentum;
  CHECK_GT(options_.epsilon, 0) << name_;
}

std::string BatchNorm::Describe() const {
  return name_ + " (BatchNorm, " + shape_.ToString() + ")";
}

std::vector<VariableSpec> BatchNorm::Variables() const {
  const Shape c = {channels_};
  return {
      {name_ + "/gamma", DType::kFloat32, c, Initializer::kOnes},
      {name_ + "/beta", DType::kFloat32, c, Initializer::kZeros},
      {name_ + "/moving_mean", DType::kFloat32, c, Initializer::kZeros, /*moving_average=*/true},
      {name_ + "/moving_variance", DType::kFloat32, c, Initializer::kOnes,
       /*moving_average=*/true},
  };
}

InferenceOp BatchNorm::Inference() const {
  InferenceOp op;
  op.kind = InferenceOp::Kind::kBatchNorm;
  op.image.height = shape_.is_image() ? shape_.height() : 1;
  op.image.width = shape_.is_image() ? shape_.width() : 1;
  op.image.in_channels = channels_;
  op.epsilon = options_.epsilon;
  return op;
}

BatchNormStatistics BatchNorm::batch_statistics() const {
  CHECK_GT(batch_rows_, 0) << name_ << ": no training Forward yet";
  BatchNormStatistics batch{std::vector<float>(channels_), std::vector<float>(channels_)};
  const float* moments = batch_moments_->f32();
  kernels_.CopyToHost(moments, batch.mean.data(), channels_ * sizeof(float));
  kernels_.CopyToHost(moments + channels_, batch.variance.data(), channels_ * sizeof(float));
  return batch;
}

Status BatchNorm::Reserve(int64_t batch) {
  if (batch_moments_ == nullptr) {
    PST_ASSIGN_OR_RETURN(batch_moments_, kernels_.Allocate(2 * channels_ * sizeof(float)));
  }
  reserved_batch_ = batch;
  return Status::OK();
}

void BatchNorm::Forward(const float* const* params, const float* x, float* y, int64_t batch,
                        bool training) {
  CHECK_LE(batch, reserved_batch_) << "Forward on a batch of " << batch << " beyond Reserve()";
  const int64_t rows = batch * (in_dim() / channels_);
  const float* mean = params[kMovingMean];
  const float* variance = params[kMovingVariance];
  if (training) {
    kernels_.ColumnMoments(x, batch_mean(), batch_variance(), rows, channels_);
    batch_rows_ = rows;
    mean = batch_mean();
    variance = batch_variance();
  }
  kernels_.BatchNormForward(x, mean, variance, params[kGamma], params[kBeta], options_.epsilon, y,
                            rows, channels_);
}

void BatchNorm::Backward(const float* const* params, const float* x, const float* /*y*/,
                         const float* dy, float* const* grads, float* dx, int64_t batch) {
  const int64_t rows = batch * (in_dim() / channels_);
  CHECK_EQ(batch_rows_, rows) << name_ << ": Backward without a training Forward on this batch";
  kernels_.BatchNormBackward(x, dy, batch_mean(), batch_variance(), params[kGamma],
                             options_.epsilon, grads[kGamma], grads[kBeta], dx, rows, channels_);
  // The moving statistics' slots get their deltas, not gradients:
  // (1 - momentum) * (batch statistic - moving one), on the back end.
  const double n = static_cast<double>(rows);
  // A single value has no unbiased variance; its biased one (0) stands in.
  const double bessel = rows > 1 ? n / (n - 1) : 1.0;
  const double rate = 1.0 - options_.momentum;
  kernels_.ScaledSum(static_cast<float>(rate), batch_mean(), static_cast<float>(-rate),
                     params[kMovingMean], grads[kMovingMean], channels_);
  kernels_.ScaledSum(static_cast<float>(rate * bessel), batch_variance(), static_cast<float>(-rate),
                     params[kMovingVariance], grads[kMovingVariance], channels_);
}

}  // namespace pst
