#include "common/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace pst {
namespace {

using std::chrono::milliseconds;

// Waits until `done` holds, for at most 30 s (far more than any of these
// needs, so a slow machine passes and a broken thread fails, not hangs).
bool WaitUntil(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST(PeriodicThreadTest, TicksAtOnceThenStopsWhenDestroyed) {
  std::atomic<int> ticks{0};
  {
    // A long period: only the first tick can happen before the destructor.
    PeriodicThread thread(std::chrono::hours(1), [&ticks] { ++ticks; });
    ASSERT_TRUE(WaitUntil([&ticks] { return ticks.load() > 0; })) << "no first tick";
  }
  EXPECT_EQ(ticks.load(), 1);
}

TEST(PeriodicThreadTest, TicksAgainEveryPeriod) {
  std::atomic<int> ticks{0};
  PeriodicThread thread(milliseconds(1), [&ticks] { ++ticks; });
  EXPECT_TRUE(WaitUntil([&ticks] { return ticks.load() >= 3; })) << ticks.load() << " ticks";
}

TEST(PeriodicThreadTest, DestructionWaitsForARunningTick) {
  std::atomic<bool> started{false}, finished{false};
  {
    PeriodicThread thread(std::chrono::hours(1), [&] {
      started = true;
      std::this_thread::sleep_for(milliseconds(50));
      finished = true;
    });
    ASSERT_TRUE(WaitUntil([&started] { return started.load(); }));
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace pst
