#include "scheduler/worker_absence.h"

namespace pst {

std::optional<std::string> WorkerAbsence::Observe(MonotonicClock::TimePoint now, bool present,
                                                  int64_t step, int64_t train_steps) {
  if (present) {
    absent_since_.reset();
    return std::nullopt;
  }
  if (!absent_since_) absent_since_ = now;
  if (now - *absent_since_ <= patience_) return std::nullopt;
  return "training is open at global step " + std::to_string(step) + " of " +
         std::to_string(train_steps) + " but no worker has been alive for " +
         std::to_string(patience_.count()) +
         " ms (--join_timeout_ms): the workers never started, or all of them left (async "
         "workers stop at --train_steps; a ps lost after that rolls the run back to its last "
         "checkpoint, below it)";
}

}  // namespace pst
