#include "scheduler/sync_coordinator.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

// The step of the token `worker` gets now, or nullopt when its request is
// parked. `last_received`: the step of its last token.
std::optional<int64_t> TakeToken(SyncCoordinator& sync, int worker, int64_t last_received) {
  zmq::message_t routing{std::string("addr")};
  RequestContext context{&routing, 1};
  const OutgoingMessage reply = sync.HandleTokenRequest(worker, last_received, context);
  if (context.deferred()) return std::nullopt;
  return reply.step;
}

std::chrono::steady_clock::time_point Now() { return std::chrono::steady_clock::now(); }

TEST(SyncCoordinatorTest, PauseWaitsForEveryShardAndHoldsTheNextTokens) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/3, /*train_steps=*/100, /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  sync.ShardApplied(0, 0);
  // ps:1 has not applied step 0 yet: the shards are not at one step.
  EXPECT_EQ(sync.Pause(Now()).status().code(), Code::kDeadlineExceeded);
  sync.ShardApplied(1, 0);
  EXPECT_EQ(sync.global_step(), 1);
  // Paused: the tokens of step 1 are held back.
  EXPECT_EQ(TakeToken(sync, 1, -1), 0);
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 1);
  sync.Resume();
  EXPECT_EQ(TakeToken(sync, 2, -1), 1);
}

TEST(SyncCoordinatorTest, ReSentTokenRequestGetsTheSameStep) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100,
                       /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);            // the first answer was lost
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);  // it used step 0: it waits
}

TEST(SyncCoordinatorTest, RollbackHandsOutTheRestoredStepAgain) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100,
                       /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 1, -1), 0);
  sync.ShardApplied(0, 0);
  EXPECT_EQ(TakeToken(sync, 0, 0), 1);
  sync.Open(0);  // e.g. a restarted ps: back to the checkpoint of step 0
  EXPECT_EQ(TakeToken(sync, 0, 1), 0);
  EXPECT_EQ(TakeToken(sync, 1, 0), 0);
  EXPECT_EQ(TakeToken(sync, 1, 0), std::nullopt);
}

TEST(SyncCoordinatorTest, IgnoresNoticesFromBeforeARollback) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, /*server=*/nullptr);
  sync.Open(40);             // restored at step 40
  sync.ShardApplied(0, 57);  // sent before the rollback
  EXPECT_EQ(sync.global_step(), 40);
  EXPECT_FALSE(sync.Pause(Now()).ok());  // step 40 is in flight; now paused
  sync.ShardApplied(0, 40);
  sync.ShardApplied(1, 40);
  // Had the old notice counted, ps:0 would stand at 58, not 41.
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 41);
}

// At --train_steps the workers are held, not sent away: until the chief has
// its final checkpoint, a lost ps can still be recovered with them.
TEST(SyncCoordinatorTest, TrainStepsHoldsTheWorkersUntilClose) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/1, /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  sync.ShardApplied(0, 0);
  EXPECT_EQ(sync.global_step(), 1);
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);  // parked, not told to stop
}

// No shard has applied the step whose tokens are out: a shard could apply it
// while its part is written. Pause waits for that step, not only for the
// shards to agree.
TEST(SyncCoordinatorTest, PauseWaitsForTheStepInFlight) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);  // step 0 is in flight
  EXPECT_EQ(sync.Pause(Now()).status().code(), Code::kDeadlineExceeded);
  sync.ShardApplied(0, 0);
  sync.ShardApplied(1, 0);
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 1);
}

// A signal stopped the workers mid-step: once closed, the step in flight is
// abandoned and a checkpoint of the steps every shard applied goes ahead.
TEST(SyncCoordinatorTest, AfterCloseThePauseDoesNotWaitForTheAbandonedStep) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  sync.ShardApplied(0, 0);
  sync.ShardApplied(1, 0);
  EXPECT_EQ(TakeToken(sync, 0, 0), 1);  // step 1 is in flight; no worker finishes it
  EXPECT_EQ(sync.Pause(Now()).status().code(), Code::kDeadlineExceeded);
  sync.Close();
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 1);
}

}  // namespace
}  // namespace pst
