// StepCadence: at which global steps the chief's timeline writes a Step line
// and evaluates the model: once per `log_every` / `eval_every` steps from the
// step training opened at, never at or past the last step (the final line
// and evaluation wait for the workers' last reports). A step lower than the
// last one observed (a recovery rolled the cluster back to a checkpoint)
// starts both over from it, so the steps trained again are reported and
// evaluated again, not only those past the old high-water mark.
//
// The contract (--eval_every_steps' --help, docs/DESIGN.md): the timeline
// looks at the global step now and then; at a look it evaluates, at the step
// it saw, when the step has reached or passed one or more multiples of
// `eval_every` (counted from the start step) since the last evaluation. At
// most one evaluation per look, however many multiples the step passed
// between two looks: the model of a step the chief did not see is gone, and
// evaluating the one it sees twice would tell nothing new. Step lines follow
// the same rule with `log_every`. So a run evaluates at most once per
// interval, and at least at the end.
//
// A plain calculator: steps in, decisions out. Not thread-safe.
#ifndef PST_SCHEDULER_STEP_CADENCE_H_
#define PST_SCHEDULER_STEP_CADENCE_H_

#include <cstdint>

namespace pst {

class StepCadence {
 public:
  // `log_every` > 0; `eval_every` 0: no evaluation while training.
  StepCadence(int64_t log_every, int64_t eval_every, int64_t train_steps, int64_t start_step);

  // The global step as the timeline read it now.
  void Observe(int64_t step);

  bool LogDue(int64_t step) const { return step >= next_log_ && step < train_steps_; }
  // The line for `step` was written, or had no reports to show.
  void Logged(int64_t step);
  bool EvalDue(int64_t step) const {
    return eval_every_ > 0 && step >= next_eval_ && step < train_steps_;
  }
  void Evaluated(int64_t step);

 private:
  const int64_t log_every_;
  const int64_t eval_every_;
  const int64_t train_steps_;
  int64_t last_step_;
  int64_t next_log_;
  int64_t next_eval_;
};

}  // namespace pst

#endif  // PST_SCHEDULER_STEP_CADENCE_H_
