// SyncSteps: the decisions of sync training, with no transport: which
// workers get which step and N, when the step moves, what a pause holds.
#include "scheduler/sync_steps.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/clock.h"

namespace pst {
namespace {

using Verdict = TokenAnswer::Verdict;
using Workers = std::vector<int>;

// The step `worker` is granted now, or -1 when it waits (-2: stop).
int64_t Take(SyncSteps& steps, int worker, int64_t last_received) {
  const TokenAnswer answer = steps.Request(worker, last_received);
  return answer.verdict == Verdict::kGo ? answer.step : answer.verdict == Verdict::kWait ? -1 : -2;
}

TEST(SyncStepsTest, OpenReleasesTheWaitingWithTheStepAndN) {
  SyncSteps steps({0}, /*num_workers=*/2, /*train_steps=*/100, SyncQuorum{2});
  EXPECT_EQ(Take(steps, 1, -1), -1);
  const TokenRelease release = steps.Open(3);  // e.g. restored at step 3
  EXPECT_EQ(release.workers, Workers{1});
  EXPECT_EQ(release.step, 3);
  EXPECT_EQ(release.quorum, 2);
  EXPECT_EQ(Take(steps, 0, -1), 3);
}

TEST(SyncStepsTest, TheStepMovesWhenEverySyncShardApplied) {
  SyncSteps steps({0, 2}, /*num_workers=*/1, /*train_steps=*/100, SyncQuorum{1});
  steps.Open(0);
  EXPECT_EQ(Take(steps, 0, -1), 0);
  EXPECT_EQ(Take(steps, 0, 0), -1);
  EXPECT_TRUE(steps.ShardApplied(1, 0).workers.empty());  // ps:1 holds no trainable variable
  EXPECT_TRUE(steps.ShardApplied(0, 0).workers.empty());
  EXPECT_TRUE(steps.ShardApplied(0, 0).workers.empty());  // a repeated notice counts once
  EXPECT_EQ(steps.global_step(), 0);
  const TokenRelease release = steps.ShardApplied(2, 0);
  EXPECT_EQ(steps.global_step(), 1);
  EXPECT_EQ(release.workers, Workers{0});
  EXPECT_EQ(release.step, 1);
}

TEST(SyncStepsTest, StaleAndFutureNoticesChangeNothing) {
  SyncSteps steps({0, 1}, /*num_workers=*/1, /*train_steps=*/100, SyncQuorum{1});
  steps.Open(40);             // restored at step 40
  steps.ShardApplied(0, 57);  // sent before the rollback
  steps.ShardApplied(0, 40);
  steps.ShardApplied(0, 38);  // late
  steps.ShardApplied(1, 40);
  // Had the old notice counted, ps:0 would stand at 58 and the step at 58.
  EXPECT_EQ(steps.global_step(), 41);
}

TEST(SyncStepsTest, TrainStepsHoldsTheWorkersUntilClose) {
  SyncSteps steps({0}, /*num_workers=*/2, /*train_steps=*/1, SyncQuorum{2});
  steps.Open(0);
  EXPECT_EQ(Take(steps, 0, -1), 0);
  EXPECT_EQ(Take(steps, 0, 0), -1);
  EXPECT_TRUE(steps.ShardApplied(0, 0).workers.empty());
  EXPECT_EQ(steps.global_step(), 1);
  const TokenRelease stop = steps.Close();
  EXPECT_EQ(stop.workers, Workers{0});
  EXPECT_EQ(stop.step, -1);
  EXPECT_EQ(Take(steps, 1, -1), -2);
}

TEST(SyncStepsTest, APauseHoldsTheNextStepAndSettlesOnceEveryShardIsThere) {
  SyncSteps steps({0, 1}, /*num_workers=*/2, /*train_steps=*/100, SyncQuorum{2});
  steps.Open(0);
  EXPECT_EQ(Take(steps, 0, -1), 0);
  EXPECT_EQ(Take(steps, 0, 0), -1);
  steps.Pause();
  EXPECT_FALSE(steps.Settled());  // step 0 is in flight
  steps.ShardApplied(0, 0);
  EXPECT_FALSE(steps.Settled());                          // ps:1 is not there yet
  EXPECT_TRUE(steps.ShardApplied(1, 0).workers.empty());  // held back
  EXPECT_TRUE(steps.Settled());
  EXPECT_EQ(steps.global_step(), 1);
  const TokenRelease resumed = steps.Resume();
  EXPECT_EQ(resumed.workers, Workers{0});
  EXPECT_EQ(resumed.step, 1);
  EXPECT_FALSE(steps.Settled());
  EXPECT_TRUE(steps.Resume().workers.empty());  // step 1's tokens are out already
}

TEST(SyncStepsTest, OnceClosedTheStepInFlightIsAbandoned) {
  SyncSteps steps({0}, /*num_workers=*/1, /*train_steps=*/100, SyncQuorum{1});
  steps.Open(0);
  EXPECT_EQ(Take(steps, 0, -1), 0);
  EXPECT_FALSE(steps.Settled());
  steps.Close();
  EXPECT_TRUE(steps.Settled());
}

// Workers 0 and 1 answer 10 ms after each step opens, worker 2 never: once
// step 0 is past the horizon (step 2 opens), N drops to 2.
TEST(SyncStepsTest, AutoPicksNFromWhenGradientsArrived) {
  FakeClock clock;
  SyncQuorum autos;
  autos.window = 2;
  autos.clock = &clock;
  SyncSteps steps({0}, /*num_workers=*/3, /*train_steps=*/100, autos);
  EXPECT_EQ(steps.Open(0).quorum, 3);
  for (int w = 0; w < 3; ++w) ASSERT_EQ(Take(steps, w, -1), 0);
  std::vector<int> released_n;
  for (int64_t step = 0; step < 2; ++step) {
    clock.Advance(std::chrono::milliseconds(10));
    for (int w = 0; w < 2; ++w) EXPECT_EQ(Take(steps, w, step), -1);
    released_n.push_back(steps.ShardApplied(0, step).quorum);
  }
  EXPECT_EQ(released_n, (std::vector<int>{3, 2}));
  EXPECT_EQ(steps.quorum(), 2);
}

}  // namespace
}  // namespace pst
