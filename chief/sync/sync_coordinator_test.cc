// SyncCoordinator across the cases of DESIGN section 7, with the replies of
// parked token requests caught by a fake sender: no transport, no sleeps.
#include "chief/sync/sync_coordinator.h"

#include <gtest/gtest.h>

#include <map>

#include "transport/frames.h"

namespace pst {
namespace {

// The N a token reply says its step aggregates, as the worker decodes it.
int QuorumIn(const OutgoingMessage& reply) {
  auto decoded = DecodeMessage(EncodeMessage(reply, {1, 1, wire::Role::Chief, 0}), 1 << 20);
  if (!decoded.ok() || decoded->header().join() == nullptr) return -1;
  return decoded->header().join()->replicas_to_aggregate();
}

// Catches deferred replies: the step each worker was finally sent, and its N.
class FakeReplies : public ReplySender {
 public:
  void SendDeferred(DeferredReply to, const OutgoingMessage& reply) override {
    EXPECT_EQ(reply.type, wire::MessageType::TokenReply);
    sent[to.address].push_back(reply.step);
    request_ids[to.address].push_back(to.request_id);
    quorum[to.address].push_back(QuorumIn(reply));
  }
  std::map<std::string, std::vector<int64_t>> sent;  // by address ("worker:0")
  std::map<std::string, std::vector<int>> quorum;
  std::map<std::string, std::vector<uint64_t>> request_ids;
};

class SyncCoordinatorTest : public ::testing::Test {
 protected:
  // The step of the token `worker` gets now, or nullopt when its request is
  // parked (its reply then goes to replies_.sent["worker:<worker>"]).
  // `last_received`: the step of its last token.
  std::optional<int64_t> TakeToken(SyncCoordinator& sync, int worker, int64_t last_received) {
    RequestContext context("worker:" + std::to_string(worker), ++request_id_);
    const OutgoingMessage reply = sync.HandleTokenRequest(worker, last_received, context);
    if (context.deferred()) return std::nullopt;
    return reply.step;
  }
  std::vector<int64_t> Sent(int worker) {
    return replies_.sent["worker:" + std::to_string(worker)];
  }
  static std::chrono::steady_clock::time_point Now() { return std::chrono::steady_clock::now(); }

  FakeReplies replies_;
  uint64_t request_id_ = 0;
};

using Steps = std::vector<int64_t>;

TEST_F(SyncCoordinatorTest, NoTokenBeforeOpen) {
  SyncCoordinator sync({0}, /*num_workers=*/1, /*train_steps=*/100, &replies_, SyncQuorum{1});
  EXPECT_EQ(TakeToken(sync, 0, -1), std::nullopt);
  sync.Open(3);  // e.g. restored at step 3
  EXPECT_EQ(Sent(0), Steps{3});
}

TEST_F(SyncCoordinatorTest, StepAdvancesWhenEveryShardApplied) {
  SyncCoordinator sync({0, 2}, /*num_workers=*/1, /*train_steps=*/100, &replies_, SyncQuorum{1});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);
  sync.ShardApplied(1, 0);  // ps:1 holds no trainable variable: ignored
  sync.ShardApplied(0, 0);
  EXPECT_EQ(sync.global_step(), 0);
  EXPECT_TRUE(Sent(0).empty());
  sync.ShardApplied(2, 0);
  EXPECT_EQ(sync.global_step(), 1);
  EXPECT_EQ(Sent(0), Steps{1});
}

// No shard can apply a step whose tokens are not out: such a notice is from
// before a rollback (a future step) and is ignored.
TEST_F(SyncCoordinatorTest, IgnoresNoticesFromBeforeARollback) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
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

// A newer request of a waiting worker replaces its parked one: the token
// goes to the request the worker waits on, once.
TEST_F(SyncCoordinatorTest, TheTokenGoesToTheNewestParkedRequest) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);  // request 2
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);  // request 3, a second later
  sync.ShardApplied(0, 0);
  EXPECT_EQ(Sent(0), Steps{1});
  EXPECT_EQ(replies_.request_ids["worker:0"], std::vector<uint64_t>{3});
}

TEST_F(SyncCoordinatorTest, ReSentTokenRequestGetsTheSameStep) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);            // the first answer was lost
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);  // it used step 0: it waits
}

// With a spare worker, the shards apply a step without the slow worker's
// gradient: the step moves on without it, and the slow worker, asking late,
// gets the newest step at once, never the one it missed.
TEST_F(SyncCoordinatorTest, SpareWorkerLetsTheStepMoveWithoutTheSlowWorker) {
  SyncCoordinator sync({0}, /*num_workers=*/3, /*train_steps=*/100, &replies_, SyncQuorum{3});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 1, -1), 0);
  EXPECT_EQ(TakeToken(sync, 2, -1), 0);  // the slow one
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);
  EXPECT_EQ(TakeToken(sync, 1, 0), std::nullopt);
  sync.ShardApplied(0, 0);  // N=2 gradients of step 0 applied
  EXPECT_EQ(Sent(0), Steps{1});
  EXPECT_EQ(Sent(1), Steps{1});
  sync.ShardApplied(0, 1);
  EXPECT_EQ(TakeToken(sync, 2, 0), 2);
}

// A worker that died holding a parked request is not waited for; when it
// restarts (it remembers no token) it gets the current step.
TEST_F(SyncCoordinatorTest, DeadWorkerIsNotWaitedForAndRestartsAtTheCurrentStep) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 1, -1), 0);
  EXPECT_EQ(TakeToken(sync, 1, 0), std::nullopt);  // then worker:1 dies
  sync.ShardApplied(0, 0);
  sync.ShardApplied(0, 1);
  EXPECT_EQ(sync.global_step(), 2);
  EXPECT_EQ(Sent(1), Steps{1});  // lost with the dead process
  EXPECT_EQ(TakeToken(sync, 1, -1), 2);
  EXPECT_EQ(TakeToken(sync, 1, 2), std::nullopt);
}

TEST_F(SyncCoordinatorTest, RollbackHandsOutTheRestoredStepAgain) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 1, -1), 0);
  sync.ShardApplied(0, 0);
  EXPECT_EQ(TakeToken(sync, 0, 0), 1);
  EXPECT_EQ(TakeToken(sync, 0, 1), std::nullopt);
  sync.Open(0);                  // e.g. a restarted ps: back to the checkpoint of step 0
  EXPECT_EQ(Sent(0), Steps{0});  // the parked request gets the restored step
  EXPECT_EQ(sync.global_step(), 0);
  EXPECT_EQ(TakeToken(sync, 1, 0), 0);
  EXPECT_EQ(TakeToken(sync, 1, 0), std::nullopt);
}

// A restarted chief opens at its checkpoint's step; workers of the earlier
// chief, holding later tokens, get that step.
TEST_F(SyncCoordinatorTest, RestartedChiefOpensAtItsCheckpoint) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
  sync.Open(20);
  EXPECT_EQ(TakeToken(sync, 0, 23), 20);
  EXPECT_EQ(TakeToken(sync, 1, 20), 20);
  EXPECT_EQ(TakeToken(sync, 1, 20), std::nullopt);
}

// At --train_steps the workers are held, not sent away: until the chief has
// its final checkpoint, a lost ps can still be recovered with them.
TEST_F(SyncCoordinatorTest, TrainStepsHoldsTheWorkersUntilClose) {
  SyncCoordinator sync({0}, /*num_workers=*/2, /*train_steps=*/1, &replies_, SyncQuorum{2});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  sync.ShardApplied(0, 0);
  EXPECT_EQ(sync.global_step(), 1);
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);  // parked, not told to stop
  EXPECT_TRUE(Sent(0).empty());
  sync.Close();
  EXPECT_EQ(Sent(0), Steps{-1});          // told to stop
  EXPECT_EQ(TakeToken(sync, 1, -1), -1);  // closed: told at once
}

TEST_F(SyncCoordinatorTest, PauseWaitsForEveryShardAndHoldsTheNextTokens) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/3, /*train_steps=*/100, &replies_, SyncQuorum{3});
  sync.Open(0);
  EXPECT_EQ(TakeToken(sync, 0, -1), 0);
  EXPECT_EQ(TakeToken(sync, 0, 0), std::nullopt);
  sync.ShardApplied(0, 0);
  // ps:1 has not applied step 0 yet: the shards are not at one step.
  EXPECT_EQ(sync.Pause(Now()).status().code(), Code::kDeadlineExceeded);
  sync.ShardApplied(1, 0);
  EXPECT_EQ(sync.global_step(), 1);
  // Paused: the tokens of step 1 are held back.
  EXPECT_TRUE(Sent(0).empty());
  EXPECT_EQ(TakeToken(sync, 1, -1), 0);
  auto step = sync.Pause(Now());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 1);
  sync.Resume();
  EXPECT_EQ(Sent(0), Steps{1});
  EXPECT_EQ(TakeToken(sync, 2, -1), 1);
}

// No shard has applied the step whose tokens are out: a shard could apply it
// while its part is written. Pause waits for that step, not only for the
// shards to agree.
TEST_F(SyncCoordinatorTest, PauseWaitsForTheStepInFlight) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
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
TEST_F(SyncCoordinatorTest, AfterCloseThePauseDoesNotWaitForTheAbandonedStep) {
  SyncCoordinator sync({0, 1}, /*num_workers=*/2, /*train_steps=*/100, &replies_, SyncQuorum{2});
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

TEST_F(SyncCoordinatorTest, EveryTokenCarriesTheFixedN) {
  SyncCoordinator sync({0}, /*num_workers=*/3, /*train_steps=*/100, &replies_, SyncQuorum{2});
  sync.Open(0);
  RequestContext context("worker:0", 1);
  EXPECT_EQ(QuorumIn(sync.HandleTokenRequest(0, -1, context)), 2);
  EXPECT_FALSE(TakeToken(sync, 0, 0).has_value());
  sync.ShardApplied(0, 0);
  EXPECT_EQ(replies_.quorum["worker:0"], std::vector<int>{2});
}

// Auto: workers 0 and 1 answer 10 ms after each step opens, worker 2 never;
// once step 0 is past the horizon (step 2 opens) N drops to 2, and the
// tokens of step 2 say so.
TEST_F(SyncCoordinatorTest, AutoPicksNFromWhenGradientsArrived) {
  FakeClock clock;
  SyncQuorum autos;
  autos.window = 2;
  autos.clock = &clock;
  SyncCoordinator sync({0}, /*num_workers=*/3, /*train_steps=*/100, &replies_, autos);
  sync.Open(0);
  EXPECT_EQ(sync.quorum(), 3);
  for (int w = 0; w < 3; ++w) ASSERT_EQ(TakeToken(sync, w, -1), 0);
  for (int64_t step = 0; step < 2; ++step) {
    clock.Advance(std::chrono::milliseconds(10));
    for (int w = 0; w < 2; ++w) EXPECT_FALSE(TakeToken(sync, w, step).has_value());
    sync.ShardApplied(0, step);
  }
  EXPECT_EQ(sync.quorum(), 2);
  EXPECT_EQ(replies_.quorum["worker:0"], (std::vector<int>{3, 2}));
  EXPECT_EQ(replies_.sent["worker:0"], (Steps{1, 2}));
  RequestContext late("worker:2", 99);
  EXPECT_EQ(QuorumIn(sync.HandleTokenRequest(2, 0, late)), 2);
}

}  // namespace
}  // namespace pst
