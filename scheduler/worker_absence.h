// WorkerAbsence: whether a run whose training is open has gone on without
// any worker for too long, as a plain decision on the times it is shown.
//
// Training open with no worker alive makes no progress and never will
// unless a worker comes: the workers may never have started, or they all
// left (async workers stop at --train_steps; a ps lost after that rolls the
// run back below it, to steps no one is left to train). A run must not
// wait for them for ever: after `patience` (--join_timeout_ms, the time a
// worker waits for the chief) the chief gives up with an error that says so.
//
// Thread safety: none.
#ifndef PST_SCHEDULER_WORKER_ABSENCE_H_
#define PST_SCHEDULER_WORKER_ABSENCE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"

namespace pst {

class WorkerAbsence {
 public:
  explicit WorkerAbsence(std::chrono::milliseconds patience) : patience_(patience) {}

  // At `now`, at global step `step` of `train_steps`, `present` says whether
  // any worker is alive (joined and not gone, or waiting to join). Returns
  // why the run should stop once no worker was present for longer than the
  // patience; nullopt otherwise.
  std::optional<std::string> Observe(MonotonicClock::TimePoint now, bool present, int64_t step,
                                     int64_t train_steps);

 private:
  const std::chrono::milliseconds patience_;
  std::optional<MonotonicClock::TimePoint> absent_since_;
};

}  // namespace pst

#endif  // PST_SCHEDULER_WORKER_ABSENCE_H_
