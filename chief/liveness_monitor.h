// LivenessMonitor: the chief's watch over heartbeats (DESIGN section 8).
// A thread of its own declares dead, and logs, every task silent for longer
// than the timeout, whatever the chief's main loop is doing (a recovery can
// block it for --ps_wait_timeout_ms). The dead show in the metrics through
// ChiefState (live_ps, live_workers, task_deaths). When its own checks were
// held up for half a timeout or more (the chief was stopped or starved), the
// heartbeats sent meanwhile are still unread: it excuses those silences
// (ChiefState::ExcuseSilences) instead of declaring every task dead.
//
// Thread safety: constructed and destroyed by one thread.
#ifndef PST_CHIEF_LIVENESS_MONITOR_H_
#define PST_CHIEF_LIVENESS_MONITOR_H_

#include <chrono>

#include "chief/chief_state.h"
#include "common/clock.h"
#include "common/periodic_thread.h"

namespace pst {

class LivenessMonitor {
 public:
  // `state` is borrowed and must outlive the monitor.
  LivenessMonitor(ChiefState* state, std::chrono::milliseconds timeout,
                  const MonotonicClock& clock = SteadyClock());

 private:
  void Check();

  ChiefState* const state_;
  const std::chrono::milliseconds timeout_;
  const MonotonicClock& clock_;
  MonotonicClock::TimePoint last_check_;
  PeriodicThread thread_;  // last: starts once the members above exist
};

}  // namespace pst

#endif  // PST_CHIEF_LIVENESS_MONITOR_H_
