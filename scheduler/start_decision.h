// StartDecision: what a chief that starts while the ps may still hold a run
// does with them: carry on from their state, or initialize the variables and
// restore the newest checkpoint. A plain decision from what each shard
// reported; the chief's ShardKeeper asks the shards and carries it out.
//
// The shards' state is the run's newest, newer than any checkpoint, when
// every shard holds this cluster's variables and their states agree:
// - async (and ssp): each shard's variables are at their own versions, as
//   the workers left them; the run is at the global step, on its shard;
// - sync: every shard that aggregates gradients has applied the same number
//   of steps (a step applied on some shards and not yet on others is not one
//   state of the model), which is the run's step.
// Otherwise the checkpoint is restored, and `why` says why; it is empty when
// no shard holds anything (a first start).
#ifndef PST_SCHEDULER_START_DECISION_H_
#define PST_SCHEDULER_START_DECISION_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pst {

// What one ps shard reported as the chief started.
struct ShardAtStart {
  bool answered = true;     // false: it did not answer (or refused the cluster)
  bool holds_run = false;   // it holds this cluster's variables
  int64_t sync_step = 0;    // sync steps it has applied
  int64_t global_step = 0;  // the global step, on the shard holding it
};

struct StartDecision {
  bool carry_on = false;
  int64_t step = 0;  // carry_on: the step training goes on from
  std::string why;   // otherwise: why the checkpoint is restored ("" on a first start)
};

// `sync_shards`: the shards that aggregate gradients (sync mode);
// `global_step_shard`: the one holding the global step.
StartDecision DecideStart(bool sync, const std::vector<ShardAtStart>& shards,
                          const std::vector<int>& sync_shards, int global_step_shard);

}  // namespace pst

#endif  // PST_SCHEDULER_START_DECISION_H_
