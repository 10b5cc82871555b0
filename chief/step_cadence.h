// StepCadence: at which global steps the chief's timeline writes a Step line
// and evaluates the model: once per `log_every` / `eval_every` steps from the
// step training opened at, never at or past the last step (the final line
// and evaluation wait for the workers' last reports). A step lower than the
// last one observed (a recovery rolled the cluster back to a checkpoint)
// starts both over from it, so the steps trained again are reported and
// evaluated again, not only those past the old high-water mark.
//
// A plain calculator: steps in, decisions out. Not thread-safe.
#ifndef PST_CHIEF_STEP_CADENCE_H_
#define PST_CHIEF_STEP_CADENCE_H_

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

#endif  // PST_CHIEF_STEP_CADENCE_H_
