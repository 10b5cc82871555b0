// Plain gradient descent (tf.train.GradientDescentOptimizer):
//   var -= lr * grad
// No slots; the update count is still kept, like every optimizer's. A row
// of an embedding table gets the same update (TF's ScatterSub).
#include <algorithm>

#include "common/bfloat16.h"
#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace optimizers_internal {
namespace {

// The update of n elements, shared by Apply and ApplyRow.
void Update(float* var, const float* grad, int64_t n, float lr) {
  FloatArray w(var, n);
  ConstFloatArray g(grad, n);
  w -= lr * g;
}

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
    Update(var, grad, n, config_.learning_rate * lr_scale);
    ++slots->updates;
  }

  // Widen-and-apply: each block of the gradient is widened into a buffer
  // that stays in L1 and applied from there, so no widened copy of the
  // whole gradient goes through memory.
  void ApplyBFloat16(float* var, const uint16_t* grad, int64_t n, float lr_scale, SlotSet* slots,
                     std::vector<float>* /*scratch*/) const override {
    CheckSlots(slots, {}, n);
    const float lr = config_.learning_rate * lr_scale;
    constexpr int64_t kBlock = 2048;  // 8 KiB of float32
    float widened[kBlock];
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t m = std::min(kBlock, n - i);
      BFloat16ToFloat(grad + i, widened, m);
      Update(var + i, widened, m, lr);
    }
    ++slots->updates;
  }

  int RowSlots() const override { return 0; }

  void InitRowSlots(float* /*slots*/, int64_t /*dim*/) const override {}

  void ApplyRow(float* row, float* /*slots*/, const float* grad, int64_t dim, float lr_scale,
                int64_t /*updates*/) const override {
    Update(row, grad, dim, config_.learning_rate * lr_scale);
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
