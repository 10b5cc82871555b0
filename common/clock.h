// MonotonicClock: where code that measures time reads it, so that tests can
// move time by hand (FakeClock) instead of sleeping.
//
// Thread safety: Now() and FakeClock's methods are thread-safe.
#ifndef PST_COMMON_CLOCK_H_
#define PST_COMMON_CLOCK_H_

#include <atomic>
#include <chrono>

namespace pst {

class MonotonicClock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;
  virtual ~MonotonicClock() = default;
  virtual TimePoint Now() const = 0;
};

// std::chrono::steady_clock. Stateless; lives for the whole process.
const MonotonicClock& SteadyClock();

// A clock that moves only when told to. Starts at steady_clock's epoch.
class FakeClock : public MonotonicClock {
 public:
  TimePoint Now() const override { return TimePoint(std::chrono::nanoseconds(ns_.load())); }
  void Advance(std::chrono::nanoseconds d) { ns_ += d.count(); }

 private:
  std::atomic<int64_t> ns_{0};
};

}  // namespace pst

#endif  // PST_COMMON_CLOCK_H_
