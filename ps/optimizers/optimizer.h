// Optimizers: how a parameter-server shard turns a gradient into an update of
// the variable it holds (SGD, Momentum, Adagrad, Adam, with TensorFlow's
// update rules).
//
// An Optimizer holds only its config. The per-variable state (the "slots")
// lives in a SlotSet that the caller owns and keeps next to the variable, so
// it can be checkpointed: slots are named and enumerable.
//
// Thread safety: an Optimizer is immutable; Apply may run concurrently on
// distinct SlotSets (and distinct variables). The caller serialises updates
// of one variable and its SlotSet.
#ifndef PST_PS_OPTIMIZERS_OPTIMIZER_H_
#define PST_PS_OPTIMIZERS_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

// Only the fields of the chosen optimizer are read and validated.
struct OptimizerConfig {
  std::string name = "sgd";  // sgd | momentum | adagrad | adam
  float learning_rate = 0.01f;
  float momentum = 0.9f;      // momentum: in [0, 1)
  bool use_nesterov = false;  // momentum
  // adagrad: > 0. As in TF, Adagrad has no epsilon: this keeps accum > 0.
  float initial_accumulator = 0.1f;
  float beta1 = 0.9f;     // adam: in [0, 1)
  float beta2 = 0.999f;   // adam: in [0, 1)
  float epsilon = 1e-8f;  // adam: > 0
};

// The per-variable state of an optimizer: named slots, each with as many
// floats as the variable, plus the number of updates applied so far (Adam's
// bias correction uses it). names[i] names values[i].
struct SlotSet {
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;
  int64_t updates = 0;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  virtual const OptimizerConfig& config() const = 0;

  // Fresh state for a variable of num_elements floats.
  virtual SlotSet CreateSlots(int64_t num_elements) const = 0;

  // var -= update(grad), then ++slots->updates. var and grad hold n floats
  // and need no alignment (grad may point into a network buffer). lr_scale
  // (>= 0) multiplies the learning rate: the "scale" staleness policy passes
  // 1/(1+staleness). slots must come from this optimizer's CreateSlots(n)
  // (or a restored copy of one); a mismatch is a CHECK failure.
  virtual void Apply(float* var, const float* grad, int64_t n, float lr_scale,
                     SlotSet* slots) const = 0;
};

// Returns the optimizer that config.name names. InvalidArgument, naming the
// field and its value, for an unknown name or an out-of-range field the
// optimizer reads.
StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& config);

}  // namespace pst

#endif  // PST_PS_OPTIMIZERS_OPTIMIZER_H_
