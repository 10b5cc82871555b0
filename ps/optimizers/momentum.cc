// Momentum (tf.train.MomentumOptimizer, the ApplyMomentum kernel):
//   accum = momentum * accum + grad
//   var -= lr * accum                          (classic)
//   var -= lr * (grad + momentum * accum)      (use_nesterov)
// Slot "momentum" (the accumulator), zero at start. A row of an embedding
// table gets the same update on its own accumulator (SparseApplyMomentum).
#include <algorithm>

#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

constexpr std::string_view kAccum = "momentum";  // TF's slot name

// The update of n elements, shared by Apply and ApplyRow.
void Update(float* var, const float* grad, float* accumulator, int64_t n, float lr, float mu,
            bool nesterov) {
  FloatArray w(var, n);
  ConstFloatArray g(grad, n);
  FloatArray accum(accumulator, n);
  accum = mu * accum + g;
  if (nesterov) {
    w -= lr * (g + mu * accum);
  } else {
    w -= lr * accum;
  }
}

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
    Update(var, grad, slots->values[0].data(), n, config_.learning_rate * lr_scale,
           config_.momentum, config_.use_nesterov);
    ++slots->updates;
  }

  int RowSlots() const override { return 1; }

  void InitRowSlots(float* slots, int64_t dim) const override {
    std::fill(slots, slots + dim, 0.0f);
  }

  void ApplyRow(float* row, float* slots, const float* grad, int64_t dim, float lr_scale,
                int64_t /*updates*/) const override {
    Update(row, grad, slots, dim, config_.learning_rate * lr_scale, config_.momentum,
           config_.use_nesterov);
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
