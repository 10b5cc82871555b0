// ThreadTeam: every index runs once per Run, all at once, each on its own
// fixed thread (index 0 on the caller).
#include "model/parallel/thread_team.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace pst {
namespace {

TEST(ThreadTeamTest, SizeOneRunsOnTheCaller) {
  ThreadTeam team(1);
  EXPECT_EQ(team.size(), 1);
  std::thread::id ran_on;
  int calls = 0;
  team.Run([&](int i) {
    EXPECT_EQ(i, 0);
    ran_on = std::this_thread::get_id();
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

// Each call waits until all of them have started: Run returns only if they
// run concurrently (a timeout turns a serial team into a failure, not a
// hang).
TEST(ThreadTeamTest, RunsEveryIndexConcurrently) {
  const int n = 4;
  ThreadTeam team(n);
  std::mutex mu;
  std::condition_variable all_in;
  int arrived = 0;
  std::vector<int> calls(n, 0);
  bool timed_out = false;
  team.Run([&](int i) {
    std::unique_lock<std::mutex> lock(mu);
    ++calls[i];
    if (++arrived == n) all_in.notify_all();
    if (!all_in.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == n; })) {
      timed_out = true;
    }
  });
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(calls, std::vector<int>(n, 1));
}

TEST(ThreadTeamTest, EachIndexKeepsItsThreadAcrossRuns) {
  const int n = 3;
  ThreadTeam team(n);
  std::vector<std::thread::id> first(n);
  team.Run([&](int i) { first[i] = std::this_thread::get_id(); });
  EXPECT_EQ(first[0], std::this_thread::get_id());
  EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(), static_cast<size_t>(n));
  std::atomic<int> mismatches{0};
  std::atomic<int64_t> calls{0};
  for (int run = 0; run < 2000; ++run) {
    team.Run([&](int i) {
      if (std::this_thread::get_id() != first[i]) ++mismatches;
      ++calls;
    });
  }
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(calls.load(), 2000 * n);
}

}  // namespace
}  // namespace pst
