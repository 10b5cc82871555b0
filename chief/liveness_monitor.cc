#include "chief/liveness_monitor.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {
namespace {

// Often enough that a death is declared within a tenth of the timeout.
std::chrono::milliseconds CheckPeriod(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
}

}  // namespace

LivenessMonitor::LivenessMonitor(ChiefState* state, std::chrono::milliseconds timeout,
                                 const MonotonicClock& clock)
    : state_(state),
      timeout_(timeout),
      clock_(clock),
      last_check_(clock.Now()),
      thread_(CheckPeriod(timeout), [this] { Check(); }) {}

void LivenessMonitor::Check() {
  const auto now = clock_.Now();
  if (now - last_check_ >= timeout_ / 2) {
    LOG(WARNING) << "the chief was held for "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(now - last_check_).count()
                 << " ms (stopped or starved): silences count from now";
    state_->ExcuseSilences();
  }
  last_check_ = now;
  for (const std::string& task : state_->DeclareSilentTasksDead(timeout_)) {
    LOG(WARNING) << task << " declared dead: silent for more than --heartbeat_timeout_ms="
                 << timeout_.count();
  }
}

}  // namespace pst
