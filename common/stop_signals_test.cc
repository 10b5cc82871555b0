#include "common/stop_signals.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using Meaning = StopSignals::Meaning;

TEST(StopSignalsTest, FirstIsAGracefulStopARepeatSoonAfterIsTheSameRequest) {
  StopSignals signals(milliseconds(2000));
  const auto t0 = MonotonicClock::TimePoint() + std::chrono::hours(1);
  EXPECT_EQ(signals.OnSignal(t0), Meaning::kGracefulStop);
  EXPECT_EQ(signals.OnSignal(t0 + milliseconds(50)), Meaning::kSameRequest);
  EXPECT_EQ(signals.OnSignal(t0 + milliseconds(1999)), Meaning::kSameRequest);
}

TEST(StopSignalsTest, ALaterSignalStopsAtOnce) {
  StopSignals signals(milliseconds(2000));
  const auto t0 = MonotonicClock::TimePoint() + std::chrono::hours(1);
  EXPECT_EQ(signals.OnSignal(t0), Meaning::kGracefulStop);
  EXPECT_EQ(signals.OnSignal(t0 + milliseconds(2000)), Meaning::kStopNow);
  EXPECT_EQ(signals.OnSignal(t0 + milliseconds(9000)), Meaning::kStopNow);
}

}  // namespace
}  // namespace pst
