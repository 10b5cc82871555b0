#include "common/periodic_thread.h"

#include <atomic>

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(PeriodicThreadTest, TicksAtOnceThenStopsWhenDestroyed) {
  std::atomic<int> ticks{0};
  {
    // A long period: only the first tick can happen before the destructor.
    PeriodicThread thread(std::chrono::hours(1), [&ticks] { ++ticks; });
    while (ticks.load() == 0) std::this_thread::yield();
  }
  EXPECT_EQ(ticks.load(), 1);
}

TEST(PeriodicThreadTest, TicksAgainEveryPeriod) {
  std::atomic<int> ticks{0};
  PeriodicThread thread(std::chrono::milliseconds(1), [&ticks] { ++ticks; });
  // Generous: a millisecond period needs far less than this to tick thrice.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ticks.load() < 3 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  EXPECT_GE(ticks.load(), 3);
}

}  // namespace
}  // namespace pst
