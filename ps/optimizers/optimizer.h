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
  std::string name = "sgd";  // sgd | momentum | adagrad | adam | ftrl
  float learning_rate = 0.01f;
  float momentum = 0.9f;      // momentum: in [0, 1)
  bool use_nesterov = false;  // momentum
  // adagrad: > 0. As in TF, Adagrad has no epsilon: this keeps accum > 0.
  float initial_accumulator = 0.1f;
  float beta1 = 0.9f;     // adam: in [0, 1)
  float beta2 = 0.999f;   // adam: in [0, 1)
  float epsilon = 1e-8f;  // adam: > 0
  // ftrl (FTRL-proximal, McMahan et al. 2013; TensorFlow's FtrlOptimizer with
  // learning_rate_power -0.5): learning_rate is alpha, initial_accumulator
  // the start of n (> 0), l1 and l2 (>= 0) the regularization strengths,
  // ftrl_beta (>= 0) the beta of the paper's per-coordinate rate.
  float l1 = 0.0f;
  float l2 = 0.0f;
  float ftrl_beta = 0.0f;
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
  // Apply for a gradient that came as bfloat16 (--wire_dtype=bfloat16):
  // the same update of the widened gradient, counted once. This default
  // widens into *scratch (resized) first; an optimizer may instead widen
  // each element as it applies it, one pass fewer over the gradient.
  virtual void ApplyBFloat16(float* var, const uint16_t* grad, int64_t n, float lr_scale,
                             SlotSet* slots, std::vector<float>* scratch) const;

  // Row-sparse apply, for embedding tables (ps/sparse/): a row's optimizer
  // state is RowSlots() vectors of dim floats, stored slot after slot next
  // to the row, so only the rows a gradient touches (and their slots) move,
  // as TensorFlow's sparse kernels do. The update of a row is the dense
  // Apply's on those dim elements; Adam's bias correction counts the
  // table's applies (`updates`, before this one), as LazyAdam's beta powers.
  virtual int RowSlots() const = 0;
  // The slots of a new row (RowSlots() * dim floats).
  virtual void InitRowSlots(float* slots, int64_t dim) const = 0;
  virtual void ApplyRow(float* row, float* slots, const float* grad, int64_t dim, float lr_scale,
                        int64_t updates) const = 0;
};

// Returns the optimizer that config.name names. InvalidArgument, naming the
// field and its value, for an unknown name or an out-of-range field the
// optimizer reads.
StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& config);

}  // namespace pst

#endif  // PST_PS_OPTIMIZERS_OPTIMIZER_H_
