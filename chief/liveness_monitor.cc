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

LivenessMonitor::LivenessMonitor(ChiefState* state, std::chrono::milliseconds timeout)
    : state_(state), timeout_(timeout), thread_(CheckPeriod(timeout), [this] { Check(); }) {}

void LivenessMonitor::Check() {
  for (const std::string& task : state_->DeclareSilentTasksDead(timeout_)) {
    LOG(WARNING) << task << " declared dead: silent for more than --heartbeat_timeout_ms="
                 << timeout_.count();
  }
}

}  // namespace pst
