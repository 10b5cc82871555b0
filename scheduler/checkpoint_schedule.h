// CheckpointSchedule: when the chief saves a checkpoint, and what it does
// after a save that failed for want of storage (a full disk, a read-only
// folder): such a failure is no reason to roll anything back, so training
// goes on and the save is tried again at the next due time; after
// max_failures consecutive failures the run stops.
//
// A save is due once per `every_steps` global steps and/or once per
// `every_secs` seconds since the last attempt (0: not by that measure).
//
// Thread safety: none. Time is passed in, so tests need no clock.
#ifndef PST_SCHEDULER_CHECKPOINT_SCHEDULE_H_
#define PST_SCHEDULER_CHECKPOINT_SCHEDULE_H_

#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace pst {

struct CheckpointScheduleOptions {
  int64_t every_steps = 0;
  int every_secs = 600;
  int max_failures = 3;
};

enum class AfterSaveFailure { kRetryLater, kGiveUp };

class CheckpointSchedule {
 public:
  using TimePoint = MonotonicClock::TimePoint;

  CheckpointSchedule(CheckpointScheduleOptions options, int64_t step, TimePoint now);

  bool Due(int64_t step, TimePoint now) const;
  void Saved(int64_t step, TimePoint now);
  // The next try waits for the next due time, whatever the answer.
  AfterSaveFailure Failed(int64_t step, TimePoint now);
  // Training moved to `step` without a save (a restore after a recovery).
  void Restart(int64_t step, TimePoint now);
  // Not tried now (sync: too few workers to finish the step in flight): the
  // next try waits for the next due time; no failure is counted.
  void Postponed(int64_t step, TimePoint now) { Attempted(step, now); }

  int64_t last_saved_step() const { return last_saved_step_; }
  int consecutive_failures() const { return consecutive_failures_; }
  int max_failures() const { return options_.max_failures; }

 private:
  void Attempted(int64_t step, TimePoint now);

  const CheckpointScheduleOptions options_;
  int64_t last_attempt_step_;
  TimePoint last_attempt_time_;
  int64_t last_saved_step_;
  int consecutive_failures_ = 0;
};

}  // namespace pst

#endif  // PST_SCHEDULER_CHECKPOINT_SCHEDULE_H_
