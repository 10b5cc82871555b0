// StopSignals: what each SIGINT/SIGTERM means to a task that stops
// gracefully (the chief checkpoints first, a ps serves it meanwhile).
//
// The first asks for a graceful stop; a later one means "stop at once". A
// cluster manager may deliver one stop request more than once at nearly the
// same time (on scancel Slurm signals every step of the job, and the batch
// script forwards the signal to the chief too), so a repeat within
// `same_request` of the first is that same request.
#ifndef PST_COMMON_STOP_SIGNALS_H_
#define PST_COMMON_STOP_SIGNALS_H_

#include <chrono>
#include <optional>

#include "common/clock.h"

namespace pst {

class StopSignals {
 public:
  enum class Meaning { kGracefulStop, kSameRequest, kStopNow };

  explicit StopSignals(std::chrono::milliseconds same_request = std::chrono::seconds(2))
      : same_request_(same_request) {}

  // Not thread-safe: call it from the one thread that takes the signals.
  Meaning OnSignal(MonotonicClock::TimePoint now);

 private:
  const std::chrono::milliseconds same_request_;
  std::optional<MonotonicClock::TimePoint> first_;
};

}  // namespace pst

#endif  // PST_COMMON_STOP_SIGNALS_H_
