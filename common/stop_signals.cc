#include "common/stop_signals.h"

namespace pst {

StopSignals::Meaning StopSignals::OnSignal(Clock::time_point now) {
  if (!first_) {
    first_ = now;
    return Meaning::kGracefulStop;
  }
  return now - *first_ < same_request_ ? Meaning::kSameRequest : Meaning::kStopNow;
}

}  // namespace pst
