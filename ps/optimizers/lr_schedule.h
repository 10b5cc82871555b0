// LrSchedule: the learning rate of an update as a function of the global
// step alone, so that every ps shard computes the same rate for the same
// step and a run restored from a checkpoint (which holds the global step)
// goes on with the rate it stopped at.
//
// Kinds (lr = options.learning_rate, s = step, D = decay_steps, r = decay_rate):
//   constant     lr
//   step         lr * r^floor(s / D)          (staircase)
//   exponential  lr * r^(s / D)               (tf.train.exponential_decay)
//   cosine       lr_min + (lr - lr_min) * (1 + cos(pi * min(s, D) / D)) / 2
//                (D is the whole decay; the rate stays at lr_min after it)
//   plateau      lr * r^k, k = how many times the chief lowered the rate
//                (scheduler/plateau_decision.h decides; k is an input here)
// then the floor: max(lr_min, that). Then the linear warm-up, over the first
// W = warmup_steps steps: step s < W gets (s + 1) / W of that rate, so the
// first update uses lr / W and step W - 1 the full rate. The decay counts
// from step 0, warm-up included (cosine's D is the whole run's length).
//
// `step` is the global step before the update: the first update of a run
// uses step 0.
//
// Use: the ps builds one LrSchedule from the job's flags; optimizers hold
// their learning rate as config and take a per-apply lr_scale, so the ps
// passes
//   lr_scale = schedule.Multiplier(global_step, k) * staleness_scale
// to Optimizer::Apply / ApplyRow. For plateau the chief sends k with its
// decisions (LrLoweringsRequest) and keeps it in its checkpoint manifest.
//
// Thread safety: immutable after Parse; RateAt may run concurrently.
#ifndef PST_PS_OPTIMIZERS_LR_SCHEDULE_H_
#define PST_PS_OPTIMIZERS_LR_SCHEDULE_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace pst {

enum class LrDecay { kConstant, kStep, kExponential, kCosine, kPlateau };

// Only the fields the chosen kind reads are validated.
struct LrScheduleOptions {
  float learning_rate = 0.01f;  // the base rate, OptimizerConfig.learning_rate: > 0
  // step, exponential: the period of one factor r; cosine: the length of
  // the decay. > 0 for those kinds.
  int64_t decay_steps = 0;
  // step, exponential: the factor per decay_steps (> 0); plateau: the factor
  // per lowering (in (0, 1)).
  float decay_rate = 0.1f;
  int64_t warmup_steps = 0;  // >= 0; 0: no warm-up
  float lr_min = 0.0f;       // the floor, in [0, learning_rate]
};

class LrSchedule {
 public:
  // kind: "constant", "step", "exponential", "cosine" or "plateau".
  // InvalidArgument naming the field and its value, or the valid kinds.
  static StatusOr<LrSchedule> Parse(std::string_view kind, const LrScheduleOptions& options);

  // The rate of the update at global step `step` (>= 0); `lowerings` (>= 0)
  // is k, read by plateau only.
  float RateAt(int64_t step, int lowerings = 0) const;
  // RateAt / learning_rate: the lr_scale the optimizer's Apply takes.
  float Multiplier(int64_t step, int lowerings = 0) const;

  LrDecay kind() const { return kind_; }

 private:
  LrSchedule(LrDecay kind, const LrScheduleOptions& options) : kind_(kind), options_(options) {}

  // The rate before the floor and the warm-up.
  double Decayed(int64_t step, int lowerings) const;

  LrDecay kind_;
  LrScheduleOptions options_;
};

}  // namespace pst

#endif  // PST_PS_OPTIMIZERS_LR_SCHEDULE_H_
