// Plain gradient descent (tf.train.GradientDescentOptimizer):
//   var -= lr * grad
// No slots; the update count is still kept, like every optimizer's.
#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

class Sgd final : public Optimizer {
 public:
  explicit Sgd(const OptimizerConfig& config) : config_(config) {}

  const OptimizerConfig& config() const override { return config_; }

  SlotSet CreateSlots(int64_t num_elements) const override {
    return NewSlots({}, num_elements, 0.0f);
  }

  void Apply(float* var, const float* grad, int64_t n, float lr_scale,
             SlotSet* slots) const override {
    CheckSlots(slots, {}, n);
    const float lr = config_.learning_rate * lr_scale;
    FloatArray w(var, n);
    ConstFloatArray g(grad, n);
    w -= lr * g;
    ++slots->updates;
  }

 private:
  const OptimizerConfig config_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> NewSgd(const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(std::make_unique<Sgd>(config));
}

}  // namespace optimizers_internal
}  // namespace pst
