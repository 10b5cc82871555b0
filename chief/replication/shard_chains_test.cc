#include "chief/replication/shard_chains.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(ShardChainsTest, HomeReplicasFollowTheShardRoundTheRing) {
  EXPECT_EQ(HomeReplicas(0, 3, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(HomeReplicas(2, 3, 2), (std::vector<int>{2, 0}));
  EXPECT_EQ(HomeReplicas(1, 3, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(HomeReplicas(1, 3, 1), (std::vector<int>{1}));
}

TEST(ShardChainsTest, StartsWithTheHomeChainsAtEpochOne) {
  ShardChains chains(3, 2);
  EXPECT_EQ(chains.Describe(),
            "shard 0 epoch 1: primary ps:0, backups ps:1\n"
            "shard 1 epoch 1: primary ps:1, backups ps:2\n"
            "shard 2 epoch 1: primary ps:2, backups ps:0");
}

TEST(ShardChainsTest, ALostPrimaryIsReplacedByItsBackupAtANewEpoch) {
  ShardChains chains(3, 2);
  const ChainChange change = chains.TaskLost(1);
  EXPECT_TRUE(change.lost_shards.empty());
  ASSERT_EQ(change.changed.size(), 2u);
  // Shard 0 loses its backup; shard 1's backup becomes its primary.
  EXPECT_EQ(change.changed[0].Describe(), "shard 0 epoch 2: primary ps:0, backups none");
  EXPECT_EQ(change.changed[1].Describe(), "shard 1 epoch 2: primary ps:2, backups none");
  EXPECT_EQ(chains.chain(2).epoch, 1);  // untouched
  EXPECT_EQ(chains.promotions(), 1);
}

TEST(ShardChainsTest, ATaskBackJoinsItsHomeChainsAsTheLastBackup) {
  ShardChains chains(3, 2);
  chains.TaskLost(1);
  const ChainChange change = chains.TaskBack(1);
  ASSERT_EQ(change.changed.size(), 2u);
  EXPECT_EQ(change.changed[0].Describe(), "shard 0 epoch 3: primary ps:0, backups ps:1");
  EXPECT_EQ(change.changed[1].Describe(), "shard 1 epoch 3: primary ps:2, backups ps:1");
  // Back in every chain: nothing more to join.
  EXPECT_TRUE(chains.TaskBack(1).changed.empty());
}

// The second kill of the issue: the re-joined task's partner is lost next.
TEST(ShardChainsTest, ASecondLossAfterARejoinIsSurvived) {
  ShardChains chains(3, 2);
  chains.TaskLost(1);
  chains.TaskBack(1);
  chains.Filled(0, 1, 3);  // its probe: both replicas hold their primary's state
  chains.Filled(1, 1, 3);
  const ChainChange change = chains.TaskLost(2);
  EXPECT_TRUE(change.lost_shards.empty());
  EXPECT_EQ(chains.chain(1).Describe(), "shard 1 epoch 4: primary ps:1, backups none");
  EXPECT_EQ(chains.chain(2).Describe(), "shard 2 epoch 2: primary ps:0, backups none");
  EXPECT_EQ(chains.promotions(), 3);
}

// A backup that rejoined holds nothing until its primary's first shipment
// reached it: the primary lost before then takes the shard with it (found
// by a chaos run where both ps restarted within a probe: the empty rejoined
// task was promoted, and the sync step never completed).
TEST(ShardChainsTest, ABackupNotFilledYetIsNotPromoted) {
  ShardChains chains(3, 2);
  chains.TaskLost(1);
  chains.TaskBack(1);      // shard 1: primary ps:2, backup ps:1 at epoch 3
  chains.Filled(1, 1, 2);  // a shipment of before it joined: not its fill
  const ChainChange change = chains.TaskLost(2);
  EXPECT_EQ(change.lost_shards, (std::vector<int>{1}));
  EXPECT_EQ(chains.chain(2).Describe(), "shard 2 epoch 2: primary ps:0, backups none");
}

TEST(ShardChainsTest, AShardWithoutReplicasLeftIsLost) {
  ShardChains chains(3, 2);
  chains.TaskLost(1);
  const ChainChange change = chains.TaskLost(2);  // shard 1's last replica
  EXPECT_EQ(change.lost_shards, (std::vector<int>{1}));
  EXPECT_NE(chains.Describe().find("(lost)"), std::string::npos);
  EXPECT_TRUE(chains.TaskBack(2).lost_shards.empty());
  EXPECT_EQ(chains.chain(1).primary, 2);  // lost shards wait for ResetAll
}

TEST(ShardChainsTest, WithoutReplicationEveryLossLosesAShard) {
  ShardChains chains(2, 1);
  const ChainChange change = chains.TaskLost(0);
  EXPECT_EQ(change.lost_shards, (std::vector<int>{0}));
  EXPECT_TRUE(change.changed.empty());
}

TEST(ShardChainsTest, ResetGoesHomeAboveEveryEpoch) {
  ShardChains chains(3, 2);
  chains.TaskLost(1);
  chains.TaskLost(2);
  const ChainChange change = chains.ResetAll();
  ASSERT_EQ(change.changed.size(), 3u);
  EXPECT_EQ(chains.Describe(),
            "shard 0 epoch 3: primary ps:0, backups ps:1\n"
            "shard 1 epoch 3: primary ps:1, backups ps:2\n"
            "shard 2 epoch 3: primary ps:2, backups ps:0");
}

// A restarted chief's chains are the running ones: their backups are
// promoted only once a report says they are filled.
TEST(ShardChainsTest, AdoptedChainsPromoteABackupOnceItIsFilled) {
  ShardChains chains(3, 2);
  chains.Adopt({{0, 4, 0, {1}}, {1, 2, 2, {}}, {2, 1, 2, {0}}});
  EXPECT_EQ(chains.chain(0).Describe(), "shard 0 epoch 4: primary ps:0, backups ps:1");
  chains.Filled(0, 1, 4);
  ChainChange change = chains.TaskLost(0);
  EXPECT_TRUE(change.lost_shards.empty());
  EXPECT_EQ(chains.chain(0).Describe(), "shard 0 epoch 5: primary ps:1, backups none");
  // Shard 2's backup ps:0 was never reported filled, and is gone anyway.
  EXPECT_EQ(chains.chain(2).Describe(), "shard 2 epoch 2: primary ps:2, backups none");
  change = chains.TaskLost(2);
  EXPECT_EQ(change.lost_shards, (std::vector<int>{1, 2}));
  // ResetAll goes above the adopted epochs.
  chains.ResetAll();
  EXPECT_EQ(chains.chain(0).epoch, 6);
}

}  // namespace
}  // namespace pst
