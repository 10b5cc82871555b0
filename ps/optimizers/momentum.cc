// Momentum (tf.train.MomentumOptimizer, the ApplyMomentum kernel):
//   accum = momentum * accum + grad
//   var -= lr * accum                          (classic)
//   var -= lr * (grad + momentum * accum)      (use_nesterov)
// Slot "momentum" (the accumulator), zero at start.
#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

constexpr std::string_view kAccum = "momentum";  // TF's slot name

class Momentum final : public Optimizer {
 public:
  explicit Momentum(const OptimizerConfig& config) : config_(config) {}

  const OptimizerConfig& config() const override { return config_; }

  SlotSet CreateSlots(int64_t num_elements) const override {
    return NewSlots({kAccum}, num_elements, 0.0f);
  }

  void Apply(float* var, const float* grad, int64_t n, float lr_scale,
             SlotSet* slots) const override {
    CheckSlots(slots, {kAccum}, n);
    const float lr = config_.learning_rate * lr_scale;
    const float mu = config_.momentum;
    FloatArray w(var, n);
    ConstFloatArray g(grad, n);
    FloatArray accum(slots->values[0].data(), n);
    accum = mu * accum + g;
    if (config_.use_nesterov) {
      w -= lr * (g + mu * accum);
    } else {
      w -= lr * accum;
    }
    ++slots->updates;
  }

 private:
  const OptimizerConfig config_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> NewMomentum(const OptimizerConfig& config) {
  PST_RETURN_IF_ERROR(CheckFraction("momentum", config.momentum));
  return std::unique_ptr<Optimizer>(std::make_unique<Momentum>(config));
}

}  // namespace optimizers_internal
}  // namespace pst
