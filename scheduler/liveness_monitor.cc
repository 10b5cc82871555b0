#include "scheduler/liveness_monitor.h"

#include <algorithm>

#include <glog/logging.h>

namespace pst {

LivenessMonitor::LivenessMonitor(ChiefState* state, std::chrono::milliseconds timeout)
    : state_(state), timeout_(timeout), thread_([this] { Loop(); }) {}

LivenessMonitor::~LivenessMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LivenessMonitor::Loop() {
  // Often enough that a death is declared within a tenth of the timeout.
  const auto period = std::clamp(timeout_ / 10, std::chrono::milliseconds(10),
                                 std::chrono::milliseconds(200));
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    for (const std::string& task : state_->DeclareSilentTasksDead(timeout_)) {
      LOG(WARNING) << task << " declared dead: silent for more than --heartbeat_timeout_ms="
                   << timeout_.count();
    }
  }
}

}  // namespace pst
