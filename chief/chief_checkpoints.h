// ChiefCheckpoints: carries out the chief's checkpoint cadence. The
// CheckpointSchedule decides when a save is due and what a failed one means;
// this saves (sync: with every shard paused at one step), and tells a lost
// ps (Unavailable, for a recovery) from a failure for want of storage (a
// full disk: logged, training goes on, until --max_checkpoint_failures in a
// row stop the run with Aborted).
//
// Ownership: borrows the options, the checkpointer (null without
// --checkpoint_dir: then nothing is ever due or saved), the sync coordinator
// (null in async mode), the shard keeper, the clock (the cadence's time) and
// the plateau (null for another schedule; its k goes into each manifest);
// each must outlive this.
// Thread safety: none; the chief's main thread.
#ifndef PST_CHIEF_CHIEF_CHECKPOINTS_H_
#define PST_CHIEF_CHIEF_CHECKPOINTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "chief/checkpoints/checkpointer.h"
#include "chief/chief_options.h"
#include "chief/lr_plateau.h"
#include "chief/shard_keeper.h"
#include "chief/sync/sync_coordinator.h"
#include "common/clock.h"
#include "common/status.h"
#include "scheduler/checkpoint_schedule.h"

namespace pst {

class ChiefCheckpoints {
 public:
  ChiefCheckpoints(const ChiefOptions& options, Checkpointer* checkpointer, SyncCoordinator* sync,
                   ShardKeeper* keeper, const MonotonicClock& clock = SteadyClock(),
                   const LrPlateau* lr_plateau = nullptr);

  bool enabled() const { return checkpointer_ != nullptr; }

  // Training opened, or resumed after a recovery, at `step`.
  void Restart(int64_t step, MonotonicClock::TimePoint now) { schedule_.Restart(step, now); }
  // Once training opened at `start_step`: a chief that restored a checkpoint
  // or carried on from running ps continues a run that began earlier, which
  // the manifests record. Returns the seconds of that run before this chief
  // opened training (0 for a new run), so the report covers the whole run.
  double InheritRunStart(int64_t start_step);

  bool Due(int64_t step) const { return enabled() && schedule_.Due(step, clock_.Now()); }
  // Saves at `step` (sync: at the step every shard pauses at). OK also when
  // the save failed for want of storage or was postponed (sync: the step in
  // flight did not finish); Aborted after too many failures in a row;
  // Unavailable when a ps is gone.
  Status Save(int64_t step);
  // The checkpoint at the last step, tried once. It never stops the run for
  // want of storage (the result is complete: the failure is logged, and OK
  // returned); a lost ps is returned (Unavailable), for a recovery.
  Status SaveFinal(int64_t step);
  // After training, with the workers gone: the final checkpoint unless it
  // was tried or the newest is at `step`. A failure is only logged.
  void SaveAfterTraining(int64_t step);
  // Interrupted by a signal: saves the global step (unless saved already);
  // returns "after checkpointing at step N", or why not.
  std::string SaveOnStop();

  int64_t last_saved_step() const { return schedule_.last_saved_step(); }
  int consecutive_failures() const { return schedule_.consecutive_failures(); }
  // Since this chief's newest save; -1 before its first.
  double seconds_since_checkpoint() const;

 private:
  // Sync: Pause() until the step in flight is applied everywhere;
  // Unavailable (naming the trouble) when a ps was lost meanwhile.
  StatusOr<int64_t> PauseSync();
  void LogFinalFailure(const Status& status) const;

  Checkpointer* const checkpointer_;
  SyncCoordinator* const sync_;
  ShardKeeper* const keeper_;
  const MonotonicClock& clock_;
  const LrPlateau* const lr_plateau_;
  const std::string dir_;
  CheckpointSchedule schedule_;
  bool final_tried_ = false;
  double run_started_unix_ = 0;                               // when the run first opened training
  std::optional<MonotonicClock::TimePoint> last_checkpoint_;  // this chief's newest save
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_CHECKPOINTS_H_
