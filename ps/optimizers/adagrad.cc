// Adagrad (tf.train.AdagradOptimizer, the ApplyAdagrad kernel):
//   accum += grad^2
//   var -= lr * grad / sqrt(accum)
// Slot "accumulator", initial_accumulator at start. As in TF there is no
// epsilon: initial_accumulator > 0 keeps the denominator away from zero.
// A row of an embedding table gets the same update on its own accumulator
// (SparseApplyAdagrad).
#include <algorithm>

#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

constexpr std::string_view kAccum = "accumulator";  // TF's slot name

// The update of n elements, shared by Apply and ApplyRow.
void Update(float* var, const float* grad, float* accumulator, int64_t n, float lr) {
  FloatArray w(var, n);
  ConstFloatArray g(grad, n);
  FloatArray accum(accumulator, n);
  accum += g.square();
  w -= lr * g * accum.rsqrt();
}

class Adagrad final : public Optimizer {
 public:
  explicit Adagrad(const OptimizerConfig& config) : config_(config) {}

  const OptimizerConfig& config() const override { return config_; }

  SlotSet CreateSlots(int64_t num_elements) const override {
    return NewSlots({kAccum}, num_elements, config_.initial_accumulator);
  }

  void Apply(float* var, const float* grad, int64_t n, float lr_scale,
             SlotSet* slots) const override {
    CheckSlots(slots, {kAccum}, n);
    Update(var, grad, slots->values[0].data(), n, config_.learning_rate * lr_scale);
    ++slots->updates;
  }

  int RowSlots() const override { return 1; }

  void InitRowSlots(float* slots, int64_t dim) const override {
    std::fill(slots, slots + dim, config_.initial_accumulator);
  }

  void ApplyRow(float* row, float* slots, const float* grad, int64_t dim, float lr_scale,
                int64_t /*updates*/) const override {
    Update(row, grad, slots, dim, config_.learning_rate * lr_scale);
  }

 private:
  const OptimizerConfig config_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> NewAdagrad(const OptimizerConfig& config) {
  PST_RETURN_IF_ERROR(CheckPositive("initial_accumulator", config.initial_accumulator));
  return std::unique_ptr<Optimizer>(std::make_unique<Adagrad>(config));
}

}  // namespace optimizers_internal
}  // namespace pst
