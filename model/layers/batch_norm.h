// BatchNorm: batch normalization (Ioffe & Szegedy 2015) after a dense layer
// (per feature, over the batch) or a convolution (per channel, over batch,
// height and width: NHWC makes the input a (B*H*W, C) matrix either way).
//
//   training:  y = gamma * (x - batch_mean) / sqrt(batch_var + eps) + beta,
//              batch_var biased (divided by n = B*H*W), as Keras normalizes;
//   inference: the same with the moving mean and variance.
//
// Variables, in this order: "<name>/gamma" (C, ones) and "<name>/beta" (C,
// zeros), trainable through the ps optimizer like any other; then
// "<name>/moving_mean" (C, zeros) and "<name>/moving_variance" (C, ones),
// moving averages (VariableSpec::moving_average), as Keras names them.
//
// A training Forward normalizes with the batch statistics; Backward then
// writes, in the moving statistics' gradient slots, what they should gain:
// (1 - momentum) * (batch_stat - moving), with the unbiased batch variance
// (n / (n - 1), as Keras' moving variance), so moving + delta is Keras'
// moving-average step. A delta, not the new value, because the ps then
// applies it as a plain add, outside the optimizer (no learning rate, no
// slots, no staleness scaling): in sync mode the ps averages the N workers'
// pushes, giving one moving-average step toward the mean of their batch
// statistics (what one batch of N*B would give for the mean); in async mode
// each push is one worker's step, applied as it arrives, and a delta
// computed from a stale moving value still moves the current one by the
// right amount rather than overwriting other workers' updates. Evaluation,
// predict, model.bin and the ONNX export read the moving statistics. A
// tower model normalizes each tower's slice on its own (as per-GPU
// batch norm does) and averages the towers' deltas weighted by slice
// size, as it does gradients.
//
// All of it runs on the back end's kernels (ColumnMoments, BatchNormForward,
// BatchNormBackward, ScaledSum for the deltas), in its memory: a step copies
// nothing to the host. Not thread-safe; `kernels` is borrowed and must
// outlive it.
#ifndef PST_MODEL_LAYERS_BATCH_NORM_H_
#define PST_MODEL_LAYERS_BATCH_NORM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

struct BatchNormOptions {
  double momentum = 0.99;  // in [0, 1): the weight the moving average keeps
  double epsilon = 1e-3;   // positive: added to the variance
};

// Per channel (C values each).
struct BatchNormStatistics {
  std::vector<float> mean, variance;
};

class BatchNorm : public Layer {
 public:
  // `shape`: the input, an image (normalized per channel) or features (per
  // feature); non-empty, options in range (CHECKed).
  BatchNorm(std::string name, const InputShape& shape, Kernels& kernels,
            BatchNormOptions options = {});

  int64_t in_dim() const override { return shape_.size(); }
  int64_t out_dim() const override { return shape_.size(); }
  std::string Describe() const override;  // "bn0 (BatchNorm, 8x8x16 image)"
  std::vector<VariableSpec> Variables() const override;
  InferenceOp Inference() const override;

  Status Reserve(int64_t batch) override;
  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

  int64_t channels() const { return channels_; }
  const BatchNormOptions& options() const { return options_; }
  // The latest training Forward's batch mean and biased variance (what it
  // normalized with), copied to the host. CHECKs that there was one.
  BatchNormStatistics batch_statistics() const;

 private:
  float* batch_mean() { return batch_moments_->f32(); }
  float* batch_variance() { return batch_moments_->f32() + channels_; }

  const std::string name_;
  const InputShape shape_;
  const int64_t channels_;
  const BatchNormOptions options_;
  Kernels& kernels_;

  int64_t reserved_batch_ = 0;
  // The latest training Forward's mean then variance (2C floats), in the
  // back end's memory; allocated by the first Reserve().
  std::unique_ptr<DeviceBuffer> batch_moments_;
  int64_t batch_rows_ = 0;  // its B*H*W; 0 when there was none
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_BATCH_NORM_H_
