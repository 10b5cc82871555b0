#include "scheduler/checkpoint_schedule.h"

namespace pst {

CheckpointSchedule::CheckpointSchedule(CheckpointScheduleOptions options, int64_t step,
                                       TimePoint now)
    : options_(options),
      last_attempt_step_(step),
      last_attempt_time_(now),
      last_saved_step_(step) {}

bool CheckpointSchedule::Due(int64_t step, TimePoint now) const {
  const int64_t every = options_.every_steps;
  const bool by_steps = every > 0 && step / every > last_attempt_step_ / every;
  const bool by_time = options_.every_secs > 0 &&
                       now - last_attempt_time_ >= std::chrono::seconds(options_.every_secs);
  return by_steps || by_time;
}

void CheckpointSchedule::Attempted(int64_t step, TimePoint now) {
  last_attempt_step_ = step;
  last_attempt_time_ = now;
}

void CheckpointSchedule::Saved(int64_t step, TimePoint now) {
  Attempted(step, now);
  last_saved_step_ = step;
  consecutive_failures_ = 0;
}

AfterSaveFailure CheckpointSchedule::Failed(int64_t step, TimePoint now) {
  Attempted(step, now);
  ++consecutive_failures_;
  return consecutive_failures_ >= options_.max_failures ? AfterSaveFailure::kGiveUp
                                                        : AfterSaveFailure::kRetryLater;
}

void CheckpointSchedule::Restart(int64_t step, TimePoint now) {
  Attempted(step, now);
  last_saved_step_ = step;
}

}  // namespace pst
