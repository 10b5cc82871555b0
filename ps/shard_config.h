// What the chief sets on every ps shard (ShardConfig: the optimizer, the
// staleness policy, the training mode) and what a shard reports about itself
// (StoreStats). Plain types shared by the store, the ps service, PsClient and
// the chief, so that none of them needs the server's VariableStore to name
// them.
#ifndef PST_PS_SHARD_CONFIG_H_
#define PST_PS_SHARD_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ps/optimizers/lr_schedule.h"
#include "ps/optimizers/optimizer.h"

namespace pst {

enum class StalenessPolicy { kApply, kDrop, kScale };
enum class TrainingMode { kAsync, kSync };
// "apply", "drop" or "scale"; InvalidArgument naming --staleness_policy else.
StatusOr<StalenessPolicy> ParseStalenessPolicy(const std::string& name);

struct ShardConfig {
  OptimizerConfig optimizer;
  StalenessPolicy staleness_policy = StalenessPolicy::kApply;
  int64_t max_staleness = 0;  // for kDrop: drop when staleness > this
  // The int64 scalar incremented once per applied push; "" if not here.
  std::string global_step_variable;
  TrainingMode mode = TrainingMode::kAsync;
  int replicas_to_aggregate = 1;  // sync only
  // The learning-rate schedule (ps/optimizers/lr_schedule.h), of base rate
  // optimizer.learning_rate, read at the step of each update.
  std::string lr_schedule = "constant";
  int64_t lr_decay_steps = 0;
  float lr_decay_rate = 0.1f;
  int64_t lr_warmup_steps = 0;
  float lr_min = 0.0f;
  // Decoupled weight decay (ps/optimizers/weight_decay.h): >= 0; 0: none.
  float weight_decay = 0.0f;
  // The variables of this shard that are moving averages
  // (VariableSpec::moving_average): their pushes are deltas, added as they
  // are (a sync step adds the mean of its workers' deltas).
  std::vector<std::string> moving_averages;
};

// The schedule `config` names; InvalidArgument naming the bad field else.
StatusOr<LrSchedule> LrScheduleOf(const ShardConfig& config);
// InvalidArgument unless config.weight_decay is finite and >= 0.
Status CheckWeightDecay(const ShardConfig& config);

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
  int64_t sync_step = 0;
  uint64_t stale_pushes = 0;
  uint64_t duplicate_pushes = 0;
  std::vector<uint64_t> aggregated_per_worker;
  int lr_lowerings = 0;  // --lr_schedule=plateau: the chief's k (VariableStore::SetLrLowerings)
};

}  // namespace pst

#endif  // PST_PS_SHARD_CONFIG_H_
