// VariableStore: the variables of one ps shard, their optimizer slots and
// versions, and asynchronous apply.
//
// Thread safety: every method may be called concurrently. Initialize() takes
// the store exclusively; Pull/Push take it shared and lock each variable they
// touch, so pushes to one variable are serialised (no lost updates) while
// different variables update in parallel.
//
// Pulls are zero-copy: a pull shares the variable's buffer with the reply,
// and an apply that finds its buffer still shared (a reply still being sent)
// first moves the variable to a private copy (copy-on-write).
#ifndef PST_PS_VARIABLE_STORE_H_
#define PST_PS_VARIABLE_STORE_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "ps/optimizers/optimizer.h"
#include "transport/message.h"

namespace pst {

enum class StalenessPolicy { kApply, kDrop, kScale };
StatusOr<StalenessPolicy> ParseStalenessPolicy(const std::string& name);

struct ShardConfig {
  OptimizerConfig optimizer;
  StalenessPolicy staleness_policy = StalenessPolicy::kApply;
  int64_t max_staleness = 0;  // for kDrop: drop when staleness > this
  // The int64 scalar incremented once per applied push; "" if not here.
  std::string global_step_variable;
};

struct PushOutcome {
  uint32_t applied = 0;
  uint32_t dropped = 0;
  uint32_t scaled = 0;
  int64_t max_staleness = 0;
  int64_t global_step = -1;  // -1 when this shard does not hold it
};

struct StoreStats {
  bool initialized = false;
  uint32_t variables = 0;
  uint64_t bytes = 0;
  uint64_t updates_applied = 0;
  uint64_t gradients_dropped = 0;
  uint64_t gradients_scaled = 0;
  uint64_t staleness_sum = 0;
  uint64_t staleness_count = 0;
  int64_t staleness_max = 0;
  int64_t global_step = -1;
};

class VariableStore {
 public:
  // Replaces all variables with `values` (name -> initial value).
  Status Initialize(const ShardConfig& config,
                    std::vector<std::pair<std::string, Tensor>> values);
  bool initialized() const;

  // Appends the named variables' current values and versions to *out.
  // NotFound names the first unknown variable; nothing is appended then.
  Status Pull(const std::vector<std::string>& names, std::vector<OutTensor>* out);

  // Applies gradients (each tensor names its variable and carries the version
  // it was computed from). Every gradient is checked (known name, float32,
  // the variable's shape) before any is applied: on error nothing changes.
  StatusOr<PushOutcome> Push(const std::vector<TensorView>& gradients,
                             bool increment_global_step);

  StoreStats Stats() const;

 private:
  struct Variable {
    std::mutex mu;
    Tensor value;      // guarded by mu
    SlotSet slots;     // guarded by mu
    int64_t version = 0;  // guarded by mu: updates applied
  };

  Status CheckGradient(const TensorView& g, Variable** variable) const;
  int64_t IncrementGlobalStep();

  mutable std::shared_mutex mu_;  // exclusive for Initialize, shared otherwise
  ShardConfig config_;                                   // guarded by mu_
  std::unique_ptr<Optimizer> optimizer_;                 // guarded by mu_
  std::map<std::string, std::unique_ptr<Variable>, std::less<>> variables_;  // guarded by mu_
  Variable* global_step_ = nullptr;                      // guarded by mu_
  bool initialized_ = false;                             // guarded by mu_

  std::atomic<uint64_t> updates_applied_{0};
  std::atomic<uint64_t> gradients_dropped_{0};
  std::atomic<uint64_t> gradients_scaled_{0};
  std::atomic<uint64_t> staleness_sum_{0};
  std::atomic<uint64_t> staleness_count_{0};
  std::atomic<int64_t> staleness_max_{0};
};

}  // namespace pst

#endif  // PST_PS_VARIABLE_STORE_H_
