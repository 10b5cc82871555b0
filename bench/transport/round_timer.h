// Times pull+push rounds, in slices of repeats, and summarizes each repeat:
// payload bytes/s and the latency of a pull, a push and a round.
#ifndef PST_BENCH_TRANSPORT_ROUND_TIMER_H_
#define PST_BENCH_TRANSPORT_ROUND_TIMER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace pst {

struct Latency {
  double mean = 0, p50 = 0, p99 = 0;  // microseconds
};

// One timed repeat of pull+push rounds.
struct Repeat {
  double bytes_per_s = 0;
  int64_t rounds = 0;
  Latency pull, push, round;
};

// The median of each figure over the repeats.
Repeat MedianRepeat(const std::vector<Repeat>& reps);

// Pull+push rounds timed over several slices of one repeat.
class RoundTimer {
 public:
  RoundTimer(std::function<void()> pull, std::function<void()> push)
      : pull_(std::move(pull)), push_(std::move(push)) {}

  // Untimed rounds: at least `min_rounds` and `seconds`.
  void WarmUp(int min_rounds, double seconds);

  // Two untimed rounds, then timed rounds for `seconds` (at least 3).
  void Slice(double seconds);

  // The figures of the slices since the last call, which starts a new
  // repeat; a round moves `bytes` each way.
  Repeat TakeRepeat(size_t bytes);

 private:
  const std::function<void()> pull_, push_;
  std::vector<double> pull_us_, push_us_, round_us_;
  MonotonicClock::Duration timed_ = MonotonicClock::Duration::zero();
};

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_ROUND_TIMER_H_
