// ExportSchedule: when the chief writes the incremental export
// (--export_every_secs, job/export_files.h), and whether a base (the model
// whole) or a delta (the rows changed since the previous export), as a
// plain decision on the times and steps it is shown.
//
// A base comes first, after every `base_every` deltas, and whenever the
// chain cannot go on: the cluster went back to a checkpoint, or a write
// failed (the rows its cut took are in no file). Nothing is written until
// `every` has passed since the previous export, nor while the global step
// stands where the previous export was (nothing changed).
//
// Thread safety: none.
#ifndef PST_SCHEDULER_EXPORT_SCHEDULE_H_
#define PST_SCHEDULER_EXPORT_SCHEDULE_H_

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/clock.h"

namespace pst {

enum class ExportKind { kNone, kBase, kDelta };

class ExportSchedule {
 public:
  ExportSchedule(std::chrono::milliseconds every, int base_every)
      : every_(every), base_every_(base_every < 1 ? 1 : base_every) {}

  // What to write at `now`, global step `step`; `final`: the run ends, so
  // write now if anything changed, whatever the time.
  ExportKind Due(MonotonicClock::TimePoint now, int64_t step, bool final = false) const;
  // `kind` was written at `now`, step `step`.
  void Wrote(ExportKind kind, MonotonicClock::TimePoint now, int64_t step);
  // The chain is broken (a rollback, a failed write): the next one is a base.
  void NeedBase() { need_base_ = true; }

  // The newest export's step and its base's (-1: none yet).
  int64_t last_step() const { return last_step_; }
  int64_t base_step() const { return base_step_; }

 private:
  const std::chrono::milliseconds every_;
  const int base_every_;
  std::optional<MonotonicClock::TimePoint> last_;
  int64_t last_step_ = -1;
  int64_t base_step_ = -1;
  int deltas_since_base_ = 0;
  bool need_base_ = true;
};

}  // namespace pst

#endif  // PST_SCHEDULER_EXPORT_SCHEDULE_H_
