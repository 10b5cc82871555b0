// FTRL-proximal (McMahan et al., "Ad Click Prediction: a View from the
// Trenches", KDD 2013), as TensorFlow's FtrlOptimizer with
// learning_rate_power = -0.5 and l2_shrinkage = 0. Per coordinate, with
// lr = learning_rate * lr_scale:
//   n_new = n + g^2
//   z += g - (sqrt(n_new) - sqrt(n)) / lr * w
//   n = n_new
//   w = |z| <= l1 ? 0 : (sign(z) * l1 - z) / (sqrt(n) / lr + 2 * (l2 + beta / (2 * lr)))
// Slots "accumulator" (n, initial_accumulator at start) and "linear" (z,
// zero at start): TF's slot names.
//
// The formula is TF's ApplyFtrl kernel (core/kernels/training_ops.cc:
// `linear += grad - (new_accum.sqrt() - accum.sqrt()) / lr * var;
// quadratic = new_accum.sqrt() / lr + 2 * l2; var = |linear| > l1 ?
// (sign(linear) * l1 - linear) / quadratic : 0`), computed in float as TF
// does for float variables. Note TF's 2 * l2 where the paper writes l2: TF's
// l2 is the strength of l2 * ||w||^2. The paper's beta is folded in as TF 2.x
// (Keras' Ftrl `beta` argument) does, into the l2 the kernel sees:
// l2 + beta / (2 * lr), i.e. a denominator of (beta + sqrt(n)) / lr + 2 * l2.
// With ftrl_beta = 0 it is exactly TF1's tf.train.FtrlOptimizer.
//
// A row of an embedding table gets the same update (SparseApplyFtrl).
// lr_scale = 0 (no rate at all) leaves var and slots as they are: the update
// divides by the rate.
#include <algorithm>
#include <cmath>

#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

constexpr std::string_view kAccum = "accumulator";  // TF's slot names
constexpr std::string_view kLinear = "linear";

// The update of n elements, shared by Apply and ApplyRow. A plain loop: one
// path for every length and alignment, so a row's update is bit-identical to
// the dense one.
void Update(const OptimizerConfig& config, float* var, const float* grad, float* accum,
            float* linear, int64_t n, float lr_scale) {
  const float lr = config.learning_rate * lr_scale;
  if (!(lr > 0)) return;
  const float l1 = config.l1;
  // TF: static_cast<T>(2) * l2, with Keras' l2 + beta / (2 * lr) as l2.
  const float two_l2 = 2.0f * (config.l2 + config.ftrl_beta / (2.0f * lr));
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    const float accum_new = accum[i] + g * g;
    const float sqrt_new = std::sqrt(accum_new);
    linear[i] += g - (sqrt_new - std::sqrt(accum[i])) / lr * var[i];
    const float z = linear[i];
    const float quadratic = sqrt_new / lr + two_l2;
    var[i] = std::abs(z) > l1 ? (std::copysign(l1, z) - z) / quadratic : 0.0f;
    accum[i] = accum_new;
  }
}

class Ftrl final : public Optimizer {
 public:
  explicit Ftrl(const OptimizerConfig& config) : config_(config) {}

  const OptimizerConfig& config() const override { return config_; }

  SlotSet CreateSlots(int64_t num_elements) const override {
    SlotSet slots = NewSlots({kAccum, kLinear}, num_elements, 0.0f);
    std::fill(slots.values[0].begin(), slots.values[0].end(), config_.initial_accumulator);
    return slots;
  }

  void Apply(float* var, const float* grad, int64_t n, float lr_scale,
             SlotSet* slots) const override {
    CheckSlots(slots, {kAccum, kLinear}, n);
    Update(config_, var, grad, slots->values[0].data(), slots->values[1].data(), n, lr_scale);
    ++slots->updates;
  }

  int RowSlots() const override { return 2; }

  // accumulator then linear.
  void InitRowSlots(float* slots, int64_t dim) const override {
    std::fill(slots, slots + dim, config_.initial_accumulator);
    std::fill(slots + dim, slots + 2 * dim, 0.0f);
  }

  void ApplyRow(float* row, float* slots, const float* grad, int64_t dim, float lr_scale,
                int64_t /*updates*/) const override {
    Update(config_, row, grad, slots, slots + dim, dim, lr_scale);
  }

 private:
  const OptimizerConfig config_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> NewFtrl(const OptimizerConfig& config) {
  PST_RETURN_IF_ERROR(CheckPositive("initial_accumulator", config.initial_accumulator));
  PST_RETURN_IF_ERROR(CheckNonNegative("l1", config.l1));
  PST_RETURN_IF_ERROR(CheckNonNegative("l2", config.l2));
  PST_RETURN_IF_ERROR(CheckNonNegative("ftrl_beta", config.ftrl_beta));
  return std::unique_ptr<Optimizer>(std::make_unique<Ftrl>(config));
}

}  // namespace optimizers_internal
}  // namespace pst
