// FindRunningChains: the chains a restarted chief reads off the running ps
// tasks' replicas, and when there are none to take over.
#include "chief/replication/running_chains.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

ReplicaLoad Primary(int shard, int64_t epoch, std::vector<int> backups) {
  ReplicaLoad r;
  r.shard = shard;
  r.epoch = epoch;
  r.primary = true;
  r.backups = std::move(backups);
  return r;
}

// A backup; `backups`: those of the chain it holds (itself among them).
ReplicaLoad Backup(int shard, int64_t epoch, int64_t filled_at_epoch,
                   std::vector<int> backups = {}) {
  ReplicaLoad r;
  r.shard = shard;
  r.epoch = epoch;
  r.filled_at_epoch = filled_at_epoch;
  r.backups = std::move(backups);
  return r;
}

TEST(RunningChainsTest, EachShardsChainIsTheOneItsPrimaryHolds) {
  // 3 ps, 2 replicas: ps:1 was lost and shard 1 moved to ps:2 at epoch 2;
  // ps:1 came back as shard 0's backup at epoch 3, not filled yet.
  const std::vector<std::vector<ReplicaLoad>> by_task = {
      {Primary(0, 3, {1}), Backup(2, 1, 1)},
      {Backup(0, 3, 2)},
      {Primary(1, 2, {}), Primary(2, 1, {0})},
  };
  const RunningChains running = FindRunningChains(by_task, 3);
  ASSERT_EQ(running.why, "");
  ASSERT_EQ(running.chains.size(), 3u);
  EXPECT_EQ(running.chains[0].Describe(), "shard 0 epoch 3: primary ps:0, backups ps:1");
  EXPECT_EQ(running.chains[1].Describe(), ShardChain({1, 2, 2, {}}).Describe());
  EXPECT_EQ(running.chains[2].Describe(), "shard 2 epoch 1: primary ps:2, backups ps:0");
  EXPECT_TRUE(running.changed.empty());
}

TEST(RunningChainsTest, ADeposedPrimaryGivesWayToTheNewerOne) {
  ReplicaLoad deposed = Primary(0, 1, {1});
  deposed.deposed = true;
  const RunningChains running = FindRunningChains(
      {{deposed}, {Primary(0, 2, {})}, {Backup(1, 1, 1)}, {Primary(1, 1, {2})}}, 2);
  ASSERT_EQ(running.why, "");
  EXPECT_EQ(running.chains[0].primary, 1);
  EXPECT_EQ(running.chains[0].epoch, 2);
}

TEST(RunningChainsTest, AFirstStartHasNothingToFindAndSaysNothing) {
  const RunningChains running = FindRunningChains({{}, {}}, 2);
  EXPECT_TRUE(running.chains.empty());
  EXPECT_EQ(running.why, "");
}

// The primary was lost just before the chief: its filled backup takes over,
// one epoch up, as the chief would have done.
TEST(RunningChainsTest, AShardWhosePrimaryIsGonePromotesItsFilledBackup) {
  // ps:0, shard 0's primary, restarted empty; ps:1 holds shard 0's state.
  const RunningChains running =
      FindRunningChains({{}, {Primary(1, 1, {0}), Backup(0, 1, 1, {1})}}, 2);
  ASSERT_EQ(running.why, "");
  EXPECT_EQ(running.chains[0].Describe(), "shard 0 epoch 2: primary ps:1, backups none");
  EXPECT_EQ(running.chains[1].Describe(), "shard 1 epoch 2: primary ps:1, backups none");
  EXPECT_EQ(running.changed.size(), 2u);  // shard 1's backup ps:0 left it
}

TEST(RunningChainsTest, AShardWithoutPrimaryOrFilledBackupIsNotRunning) {
  RunningChains running = FindRunningChains({{Primary(0, 1, {1})}, {Backup(0, 1, 1)}}, 2);
  EXPECT_TRUE(running.chains.empty());
  EXPECT_EQ(running.why, "shard 1 has no replica");
  running = FindRunningChains({{Backup(0, 2, 1, {0})}, {Primary(1, 1, {})}}, 2);
  EXPECT_EQ(running.why, "shard 0 lost its primary and has no filled backup");
}

}  // namespace
}  // namespace pst
