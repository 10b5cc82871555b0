#include "common/clock.h"

namespace pst {
namespace {

class SteadyClockImpl : public MonotonicClock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

const MonotonicClock& SteadyClock() {
  static const SteadyClockImpl clock;
  return clock;
}

}  // namespace pst
