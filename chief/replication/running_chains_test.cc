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

ReplicaLoad Backup(int shard, int64_t epoch, int64_t filled_at_epoch) {
  ReplicaLoad r;
  r.shard = shard;
  r.epoch = epoch;
  r.filled_at_epoch = filled_at_epoch;
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

TEST(RunningChainsTest, AShardWithoutPrimaryOrWithAnEmptyBackupIsNotRunning) {
  RunningChains running = FindRunningChains({{Primary(0, 1, {1})}, {Backup(0, 1, 1)}}, 2);
  EXPECT_TRUE(running.chains.empty());
  EXPECT_EQ(running.why, "shard 1 has no primary on the running ps");
  // ps:1 restarted empty: the chain names it, it holds nothing.
  running = FindRunningChains({{Primary(0, 1, {1}), Backup(1, 1, 1)}, {Primary(1, 1, {0})}}, 2);
  EXPECT_EQ(running.why, "shard 0's backup ps:1 does not hold its replica at epoch 1");
}

}  // namespace
}  // namespace pst
