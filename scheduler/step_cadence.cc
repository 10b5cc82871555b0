#include "scheduler/step_cadence.h"

#include <glog/logging.h>

namespace pst {

StepCadence::StepCadence(int64_t log_every, int64_t eval_every, int64_t train_steps,
                         int64_t start_step)
    : log_every_(log_every),
      eval_every_(eval_every),
      train_steps_(train_steps),
      last_step_(start_step),
      next_log_(start_step + log_every),
      next_eval_(start_step + eval_every) {
  CHECK_GT(log_every, 0);
  CHECK_GE(eval_every, 0);
}

void StepCadence::Observe(int64_t step) {
  if (step < last_step_) {
    next_log_ = step + log_every_;
    next_eval_ = step + eval_every_;
  }
  last_step_ = step;
}

// Past `step` in whole intervals: steps skipped between two looks (a fast
// cluster) get no line or evaluation of their own.
void StepCadence::Logged(int64_t step) {
  while (next_log_ <= step) next_log_ += log_every_;
}

void StepCadence::Evaluated(int64_t step) {
  while (next_eval_ <= step) next_eval_ += eval_every_;
}

}  // namespace pst
