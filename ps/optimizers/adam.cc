// Adam (tf.train.AdamOptimizer, the ApplyAdam kernel), with t = updates + 1:
//   lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//   m = beta1 * m + (1 - beta1) * grad
//   v = beta2 * v + (1 - beta2) * grad^2
//   var -= lr_t * m / (sqrt(v) + epsilon)
// Slots "m" and "v", zero at start.
// A row of an embedding table is updated lazily, as TF's LazyAdamOptimizer
// (contrib) does: only the rows a gradient touches move, their m and v
// included, and t counts the table's applies, not the row's. This is not TF1's
// AdamOptimizer on sparse gradients, which decays m and v of every row each
// step (a cost that grows with the table).
#include <algorithm>
#include <cmath>

#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

constexpr std::string_view kM = "m";  // TF's slot names
constexpr std::string_view kV = "v";

// The update of n elements with t = updates + 1, shared by Apply and ApplyRow.
void Update(const OptimizerConfig& config, float* var, const float* grad, float* m_slot,
            float* v_slot, int64_t n, float lr_scale, int64_t updates) {
  const float b1 = config.beta1;
  const float b2 = config.beta2;
  // beta^t in double from the update count, where TF keeps a running float
  // product: same value, without rounding drift over many steps.
  const double t = static_cast<double>(updates + 1);
  const double bias_correction =
      std::sqrt(1.0 - std::pow(double{b2}, t)) / (1.0 - std::pow(double{b1}, t));
  const float lr_t = static_cast<float>(config.learning_rate * lr_scale * bias_correction);
  FloatArray w(var, n);
  ConstFloatArray g(grad, n);
  FloatArray m(m_slot, n);
  FloatArray v(v_slot, n);
  // TF's form of m = b1*m + (1-b1)*g (and likewise for v).
  m += (g - m) * (1 - b1);
  v += (g.square() - v) * (1 - b2);
  w -= lr_t * m / (v.sqrt() + config.epsilon);
}

class Adam final : public Optimizer {
 public:
  explicit Adam(const OptimizerConfig& config) : config_(config) {}

  const OptimizerConfig& config() const override { return config_; }

  SlotSet CreateSlots(int64_t num_elements) const override {
    return NewSlots({kM, kV}, num_elements, 0.0f);
  }

  void Apply(float* var, const float* grad, int64_t n, float lr_scale,
             SlotSet* slots) const override {
    CheckSlots(slots, {kM, kV}, n);
    Update(config_, var, grad, slots->values[0].data(), slots->values[1].data(), n, lr_scale,
           slots->updates);
    ++slots->updates;
  }

  int RowSlots() const override { return 2; }

  // m then v, both zero.
  void InitRowSlots(float* slots, int64_t dim) const override {
    std::fill(slots, slots + 2 * dim, 0.0f);
  }

  void ApplyRow(float* row, float* slots, const float* grad, int64_t dim, float lr_scale,
                int64_t updates) const override {
    Update(config_, row, grad, slots, slots + dim, dim, lr_scale, updates);
  }

 private:
  const OptimizerConfig config_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> NewAdam(const OptimizerConfig& config) {
  PST_RETURN_IF_ERROR(CheckFraction("beta1", config.beta1));
  PST_RETURN_IF_ERROR(CheckFraction("beta2", config.beta2));
  PST_RETURN_IF_ERROR(CheckPositive("epsilon", config.epsilon));
  return std::unique_ptr<Optimizer>(std::make_unique<Adam>(config));
}

}  // namespace optimizers_internal
}  // namespace pst
