// LrPlateau: the chief's side of --lr_schedule=plateau. It owns the
// PlateauDecision (fed the validation loss of each evaluation), tells every
// ps the number of lowerings k whenever it changes (the ps apply
// lr * r^k, ps/optimizers/lr_schedule.h), and holds k for the checkpoint
// manifest and the rate the reports show. The chief decides, the ps apply,
// every shard is sent the same k, and a restore starts from the
// checkpoint's k.
//
// Ownership: borrows the ps client, which must outlive it.
// Thread safety: none; the chief's main thread.
#ifndef PST_CHIEF_LR_PLATEAU_H_
#define PST_CHIEF_LR_PLATEAU_H_

#include <cstdint>

#include "common/clock.h"
#include "common/status.h"
#include "ps/optimizers/lr_schedule.h"
#include "ps/shard_admin.h"
#include "scheduler/plateau_decision.h"

namespace pst {

class LrPlateau {
 public:
  // `schedule`: a plateau schedule (CHECKed), as the ps run it.
  LrPlateau(LrSchedule schedule, PlateauOptions options, ShardAdmin* ps);

  // The shards start over at k = `lowerings`: the checkpoint's k before its
  // parts are restored, 0 for fresh variables, the running shards' when the
  // chief carries on with them. The decision starts afresh from k (its
  // counts are lost, which can only delay the next lowering) and every ps
  // is told k.
  Status Restart(int lowerings, MonotonicClock::TimePoint deadline);
  // Every ps is told k again: after a recovery in which every shard kept
  // its variables, a lowering sent meanwhile may have reached only some.
  Status Resend(MonotonicClock::TimePoint deadline);
  // The validation loss of the evaluation at global step `step`. On a
  // lowering: a log line, and every ps is told the new k (an error names
  // the shard; the caller recovers, and Resend or Restart makes the shards
  // agree again).
  Status Observe(int64_t step, double validation_loss, MonotonicClock::TimePoint deadline);

  int lowerings() const { return decision_.lowerings(); }
  // The rate of the update at global step `step` at the current k.
  float RateAt(int64_t step) const;

 private:
  const LrSchedule schedule_;
  const PlateauOptions options_;
  ShardAdmin* const ps_;
  PlateauDecision decision_;
};

}  // namespace pst

#endif  // PST_CHIEF_LR_PLATEAU_H_
