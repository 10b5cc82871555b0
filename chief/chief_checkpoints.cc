#include "chief/chief_checkpoints.h"

#include <algorithm>

#include "common/clock.h"

namespace pst {
namespace {

// How long a sync checkpoint waits for the step in flight before it looks
// at the shards again.
constexpr std::chrono::seconds kPauseSlice{1};

CheckpointScheduleOptions ScheduleOptions(const ChiefOptions& o) {
  return {o.checkpoint_every_steps, o.checkpoint_every_secs, o.max_checkpoint_failures};
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

ChiefCheckpoints::ChiefCheckpoints(const ChiefOptions& options, Checkpointer* checkpointer,
                                   SyncCoordinator* sync, ShardKeeper* keeper,
                                   const MonotonicClock& clock, const LrPlateau* lr_plateau)
    : checkpointer_(checkpointer),
      sync_(sync),
      keeper_(keeper),
      clock_(clock),
      lr_plateau_(lr_plateau),
      dir_(options.checkpoint_dir),
      schedule_(ScheduleOptions(options), 0, clock_.Now()) {}

double ChiefCheckpoints::InheritRunStart(int64_t start_step) {
  run_started_unix_ = UnixSeconds();
  if (!checkpointer_ || start_step == 0) return 0;
  const std::optional<CheckpointManifest> newest = NewestManifest(dir_);
  if (!newest || newest->run_started_unix <= 0) return 0;
  const double earlier_seconds = std::max(0.0, run_started_unix_ - newest->run_started_unix);
  run_started_unix_ = newest->run_started_unix;
  LOG(INFO) << "this run began " << earlier_seconds << " s ago";
  return earlier_seconds;
}

// Waits for the step in flight a second at a time and looks at the shards
// in between: a ps lost meanwhile (the step cannot finish without it) is
// recovered at once, not after --rpc_timeout_ms of waiting blind.
StatusOr<int64_t> ChiefCheckpoints::PauseSync() {
  const auto give_up = keeper_->deadline();
  for (;;) {
    const auto slice = std::min(give_up, SteadyClock().Now() + kPauseSlice);
    StatusOr<int64_t> paused = sync_->Pause(slice);
    if (paused.ok()) return paused;
    // Still paused: resuming between slices would open the next step, and
    // the pause would then wait for that one.
    if (const std::string trouble = keeper_->Probe(); !trouble.empty()) {
      sync_->Resume();
      return Unavailable(trouble);
    }
    if (SteadyClock().Now() >= give_up) {
      sync_->Resume();
      return paused.status();
    }
  }
}

// Sync: every shard must be at the same step, so new steps wait until the
// checkpoint is written. A save that fails while every shard still serves
// failed for want of storage.
Status ChiefCheckpoints::Save(int64_t step) {
  if (sync_) {
    StatusOr<int64_t> paused = PauseSync();
    if (paused.status().code() == Code::kUnavailable) return paused.status();
    if (!paused.ok()) {
      // Every shard serves, but the step in flight did not finish (too few
      // workers push): try again at the next checkpoint time.
      LOG(WARNING) << "checkpoint postponed: " << paused.status().message();
      schedule_.Postponed(step, clock_.Now());
      return Status::OK();
    }
    step = *paused;
  }
  // k changes only on this thread, between saves: the shards hold the k recorded.
  const Status saved = checkpointer_->Save(step, static_cast<int64_t>(run_started_unix_),
                                           lr_plateau_ ? lr_plateau_->lowerings() : 0);
  if (sync_) sync_->Resume();
  if (saved.ok()) {
    last_checkpoint_ = clock_.Now();
    schedule_.Saved(step, *last_checkpoint_);
    return Status::OK();
  }
  if (const std::string trouble = keeper_->Probe(); !trouble.empty()) {
    return Unavailable(trouble + " (" + saved.message() + ")");
  }
  const int limit = schedule_.max_failures();
  if (schedule_.Failed(step, clock_.Now()) == AfterSaveFailure::kGiveUp) {
    return Aborted(
        saved.message() + "; stopping: " + std::to_string(limit) +
        " checkpoints in a row failed (--max_checkpoint_failures=" + std::to_string(limit) + ")");
  }
  LOG(ERROR) << saved.message() << "; training goes on, the next checkpoint is tried when due ("
             << schedule_.consecutive_failures() << " of --max_checkpoint_failures=" << limit
             << " failures in a row)";
  return Status::OK();
}

Status ChiefCheckpoints::SaveFinal(int64_t step) {
  final_tried_ = true;
  const Status saved = Save(step);
  if (saved.ok() || saved.code() == Code::kUnavailable || saved.code() == Code::kDeadlineExceeded) {
    return saved;
  }
  LogFinalFailure(saved);
  return Status::OK();
}

// Training is over, evaluated and its model written, and the workers are
// gone: a final checkpoint that fails now (a ps lost after the last step)
// costs only a state to resume from. Failing the run for it would get the
// chief restarted to wait for workers that left.
void ChiefCheckpoints::SaveAfterTraining(int64_t step) {
  if (!checkpointer_ || final_tried_ || step == schedule_.last_saved_step()) return;
  if (Status saved = SaveFinal(step); !saved.ok()) LogFinalFailure(saved);
}

std::string ChiefCheckpoints::SaveOnStop() {
  if (!checkpointer_) return "without a checkpoint (no --checkpoint_dir)";
  const StatusOr<int64_t> step = keeper_->GlobalStep();
  if (!step.ok()) return "without a checkpoint: " + step.status().ToString();
  if (*step == 0) return "without a checkpoint: no step was trained";
  if (*step != schedule_.last_saved_step()) {
    // Sync: Save pauses every shard at one step and saves that.
    const std::optional<MonotonicClock::TimePoint> before = last_checkpoint_;
    if (Status s = Save(*step); !s.ok()) return "without a checkpoint: " + s.ToString();
    if (schedule_.consecutive_failures() > 0) {
      return "without a checkpoint: saving it failed (see above)";
    }
    if (last_checkpoint_ == before) {  // postponed: the shards did not reach one step
      return "without a new checkpoint (see above); the newest is at step " +
             std::to_string(schedule_.last_saved_step());
    }
  }
  return "after checkpointing at step " + std::to_string(schedule_.last_saved_step());
}

double ChiefCheckpoints::seconds_since_checkpoint() const {
  if (!last_checkpoint_) return -1;
  return std::chrono::duration<double>(clock_.Now() - *last_checkpoint_).count();
}

void ChiefCheckpoints::LogFinalFailure(const Status& status) const {
  LOG(ERROR) << "the final checkpoint failed: " << status.ToString()
             << "; training is complete, the newest checkpoint is at step "
             << schedule_.last_saved_step();
}

}  // namespace pst
