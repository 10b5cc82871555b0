#include "model/batch_norm.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
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

const BatchNormStatistics& BatchNorm::batch_statistics() const {
  CHECK_GT(batch_rows_, 0) << name_ << ": no training Forward yet";
  return batch_;
}

BatchNormStatistics BatchNorm::MovingAverageDelta(const BatchNormStatistics& moving) const {
  const BatchNormStatistics& batch = batch_statistics();
  const double n = static_cast<double>(batch_rows_);
  // A single value has no unbiased variance; its biased one (0) stands in.
  const double bessel = batch_rows_ > 1 ? n / (n - 1) : 1.0;
  const double rate = 1.0 - options_.momentum;
  BatchNormStatistics delta{std::vector<float>(channels_), std::vector<float>(channels_)};
  for (int64_t c = 0; c < channels_; ++c) {
    delta.mean[c] = static_cast<float>(rate * (double{batch.mean[c]} - moving.mean[c]));
    delta.variance[c] =
        static_cast<float>(rate * (bessel * batch.variance[c] - moving.variance[c]));
  }
  return delta;
}

Status BatchNorm::Reserve(int64_t batch) {
  reserved_batch_ = batch;
  if (!kernels_.host_memory()) {
    staged_in_.resize(batch * in_dim());
    staged_out_.resize(batch * in_dim());
  }
  return Status::OK();
}

const float* BatchNorm::HostView(const float* p, int64_t n, std::vector<float>* staging) {
  if (kernels_.host_memory()) return p;
  kernels_.CopyToHost(p, staging->data(), n * sizeof(float));
  return staging->data();
}

void BatchNorm::ReadScaleAndOffset(const float* const* params) {
  gamma_.resize(channels_);
  beta_.resize(channels_);
  kernels_.CopyToHost(params[kGamma], gamma_.data(), channels_ * sizeof(float));
  kernels_.CopyToHost(params[kBeta], beta_.data(), channels_ * sizeof(float));
}

BatchNormStatistics BatchNorm::ReadMoving(const float* const* params) {
  BatchNormStatistics moving{std::vector<float>(channels_), std::vector<float>(channels_)};
  kernels_.CopyToHost(params[kMovingMean], moving.mean.data(), channels_ * sizeof(float));
  kernels_.CopyToHost(params[kMovingVariance], moving.variance.data(), channels_ * sizeof(float));
  return moving;
}

void BatchNorm::Forward(const float* const* params, const float* x, float* y, int64_t batch,
                        bool training) {
  CHECK_LE(batch, reserved_batch_) << "Forward on a batch of " << batch << " beyond Reserve()";
  const int64_t rows = batch * (in_dim() / channels_);
  const float* in = HostView(x, rows * channels_, &staged_in_);
  float* out = kernels_.host_memory() ? y : staged_out_.data();
  ReadScaleAndOffset(params);

  BatchNormStatistics moving;
  const BatchNormStatistics* stats = &moving;
  if (!training) {
    moving = ReadMoving(params);
  } else {
    std::vector<double> mean(channels_, 0.0), squares(channels_, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < channels_; ++c) mean[c] += in[r * channels_ + c];
    }
    for (double& m : mean) m /= static_cast<double>(rows);
    // Two passes: the variance about the mean, not E[x^2] - mean^2, which
    // cancels catastrophically when |mean| >> std.
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < channels_; ++c) {
        const double d = in[r * channels_ + c] - mean[c];
        squares[c] += d * d;
      }
    }
    batch_ = {std::vector<float>(channels_), std::vector<float>(channels_)};
    for (int64_t c = 0; c < channels_; ++c) {
      batch_.mean[c] = static_cast<float>(mean[c]);
      batch_.variance[c] = static_cast<float>(squares[c] / static_cast<double>(rows));
    }
    batch_rows_ = rows;
    stats = &batch_;
  }

  // y = x * scale + shift per channel.
  std::vector<float> inv_std(channels_), scale(channels_), shift(channels_);
  for (int64_t c = 0; c < channels_; ++c) {
    // Async deltas computed from stale moving values can overshoot below 0.
    const double variance = std::max(stats->variance[c], 0.0f);
    inv_std[c] = static_cast<float>(1.0 / std::sqrt(variance + options_.epsilon));
    scale[c] = gamma_[c] * inv_std[c];
    shift[c] = beta_[c] - stats->mean[c] * scale[c];
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < channels_; ++c) {
      out[r * channels_ + c] = in[r * channels_ + c] * scale[c] + shift[c];
    }
  }
  if (training) inv_std_ = std::move(inv_std);
  if (!kernels_.host_memory()) kernels_.CopyToDevice(out, y, rows * channels_ * sizeof(float));
}

void BatchNorm::Backward(const float* const* params, const float* x, const float* /*y*/,
                         const float* dy, float* const* grads, float* dx, int64_t batch) {
  const int64_t rows = batch * (in_dim() / channels_);
  CHECK_EQ(batch_rows_, rows) << name_ << ": Backward without a training Forward on this batch";
  const float* in = HostView(x, rows * channels_, &staged_in_);
  const float* grad_out = HostView(dy, rows * channels_, &staged_out_);
  ReadScaleAndOffset(params);

  // With xhat = (x - mean) * inv_std: dbeta = sum dy, dgamma = sum dy * xhat.
  std::vector<double> dbeta(channels_, 0.0), dgamma(channels_, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < channels_; ++c) {
      const int64_t i = r * channels_ + c;
      dbeta[c] += grad_out[i];
      dgamma[c] += double{grad_out[i]} * (in[i] - batch_.mean[c]) * inv_std_[c];
    }
  }
  std::vector<float> dbeta_f(dbeta.begin(), dbeta.end()), dgamma_f(dgamma.begin(), dgamma.end());
  const size_t grad_bytes = channels_ * sizeof(float);
  kernels_.CopyToDevice(dgamma_f.data(), grads[kGamma], grad_bytes);
  kernels_.CopyToDevice(dbeta_f.data(), grads[kBeta], grad_bytes);
  // The moving statistics' slots get their deltas, not gradients.
  const BatchNormStatistics delta = MovingAverageDelta(ReadMoving(params));
  kernels_.CopyToDevice(delta.mean.data(), grads[kMovingMean], grad_bytes);
  kernels_.CopyToDevice(delta.variance.data(), grads[kMovingVariance], grad_bytes);
  if (dx == nullptr) return;

  // The mean and variance depend on every x of the channel too:
  // dx = gamma * inv_std / n * (n * dy - dbeta - xhat * dgamma).
  // On a device back end dx overwrites the staged x, element by element.
  float* grad_in = kernels_.host_memory() ? dx : staged_in_.data();
  const double n = static_cast<double>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < channels_; ++c) {
      const int64_t i = r * channels_ + c;
      const double xhat = (in[i] - batch_.mean[c]) * double{inv_std_[c]};
      grad_in[i] = static_cast<float>(gamma_[c] * inv_std_[c] / n *
                                      (n * grad_out[i] - dbeta[c] - xhat * dgamma[c]));
    }
  }
  if (!kernels_.host_memory()) {
    kernels_.CopyToDevice(grad_in, dx, rows * channels_ * sizeof(float));
  }
}

}  // namespace pst
