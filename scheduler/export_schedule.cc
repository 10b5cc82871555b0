#include "scheduler/export_schedule.h"

namespace pst {

ExportKind ExportSchedule::Due(MonotonicClock::TimePoint now, int64_t step, bool final) const {
  if (need_base_) {
    return final || !last_ || now - *last_ >= every_ ? ExportKind::kBase : ExportKind::kNone;
  }
  if (step == last_step_) return ExportKind::kNone;
  if (!final && now - *last_ < every_) return ExportKind::kNone;
  return deltas_since_base_ >= base_every_ ? ExportKind::kBase : ExportKind::kDelta;
}

void ExportSchedule::Wrote(ExportKind kind, MonotonicClock::TimePoint now, int64_t step) {
  if (kind == ExportKind::kNone) return;
  last_ = now;
  last_step_ = step;
  if (kind == ExportKind::kBase) {
    base_step_ = step;
    deltas_since_base_ = 0;
    need_base_ = false;
  } else {
    ++deltas_since_base_;
  }
}

}  // namespace pst
