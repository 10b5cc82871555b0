#include "common/stop_signals.h"

#include "common/clock.h"

namespace pst {

StopSignals::Meaning StopSignals::OnSignal(MonotonicClock::TimePoint now) {
  if (!first_) {
    first_ = now;
    return Meaning::kGracefulStop;
  }
  return now - *first_ < same_request_ ? Meaning::kSameRequest : Meaning::kStopNow;
}

}  // namespace pst
