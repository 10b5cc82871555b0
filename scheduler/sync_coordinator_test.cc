#include "scheduler/sync_coordinator.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

// The step of the token `worker` gets now; the request must not be parked
// (no server here to send a parked reply).
int64_t TakeToken(SyncCoordinator& sync, int worker) {
  zmq::message_t routing{std::string("addr")};
  RequestContext context{&routing, 1};
  const OutgoingMessage reply = sync.HandleTokenRequest(worker, context);
  EXPECT_FALSE(context.deferred());
  return reply.step;
}

std::chrono::steady_clock::time_point Now() { return std::chrono::steady_clock::now(); }

TEST(SyncCoordinatorTest, PauseWaitsForEveryShardAndHoldsTheNextTokens) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/3, /*train_steps=*/100, /*server=*/nullptr);
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0), 0);
  sync.ShardApplied(0, 0);
  // ps:1 has not applied step 0 yet: the shards are not at one step.
  EXPECT_EQ(sync.Pause(Now()).status().code(), Code::kDeadlineExceeded);
  sync.ShardApplied(1, 0);
  EXPECT_EQ(sync.global_step(), 1);
  // Paused: the tokens of step 1 are held back.
  EXPECT_EQ(TakeToken(sync, 1), 0);
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 1);
  sync.Resume();
  EXPECT_EQ(TakeToken(sync, 2), 1);
}

TEST(SyncCoordinatorTest, IgnoresNoticesFromBeforeARollback) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, /*server=*/nullptr);
  sync.Open(40);  // restored at step 40
  sync.ShardApplied(0, 57);  // sent before the rollback
  EXPECT_EQ(sync.global_step(), 40);
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 40);
}

}  // namespace
}  // namespace pst
