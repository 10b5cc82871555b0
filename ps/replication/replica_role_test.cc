#include "ps/replication/replica_role.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

ShardChain Chain(int64_t epoch, int primary, std::vector<int> backups) {
  return ShardChain{/*shard=*/1, epoch, primary, std::move(backups)};
}

TEST(ReplicaRoleTest, ServesNobodyBeforeItsFirstChain) {
  ReplicaRole role(1);
  EXPECT_FALSE(role.primary());
  EXPECT_EQ(role.CheckClientRequest(0).code(), Code::kFailedPrecondition);
  EXPECT_EQ(role.CheckShipment(0, 0).code(), Code::kUnavailable);
}

TEST(ReplicaRoleTest, ThePrimaryServesRequestsOfItsEpochOnly) {
  ReplicaRole role(1);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_TRUE(role.primary());
  EXPECT_TRUE(role.CheckClientRequest(3).ok());
  const Status stale = role.CheckClientRequest(2);
  EXPECT_EQ(stale.code(), Code::kFailedPrecondition);
  EXPECT_NE(stale.message().find("routed by epoch 2"), std::string::npos) << stale.message();
  EXPECT_EQ(role.CheckClientRequest(4).code(), Code::kFailedPrecondition);
}

TEST(ReplicaRoleTest, ABackupRefusesWorkersAndNamesThePrimary) {
  ReplicaRole role(2);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_FALSE(role.primary());
  const Status refused = role.CheckClientRequest(3);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("primary ps:1"), std::string::npos) << refused.message();
}

TEST(ReplicaRoleTest, ABackupTakesShipmentsFromItsPrimaryAtItsEpoch) {
  ReplicaRole role(2);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_TRUE(role.CheckShipment(1, 3).ok());
  EXPECT_EQ(role.CheckShipment(0, 3).code(), Code::kFailedPrecondition);  // not the primary
  EXPECT_EQ(role.CheckShipment(1, 4).code(), Code::kUnavailable);         // its chain is on its way
}

// The chief sends a chain to every replica at once: a backup may hold it
// before its primary does.
TEST(ReplicaRoleTest, AnOlderShipmentIsRefusedAsDeposedOnlyFromAnotherPrimary) {
  ReplicaRole role(2);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_EQ(role.CheckShipment(1, 2).code(), Code::kUnavailable);  // still the primary at 3
  ASSERT_TRUE(role.Adopt(Chain(4, 0, {2})).ok());
  EXPECT_EQ(role.CheckShipment(1, 3).code(), Code::kAborted);  // ps:1 was replaced
}

TEST(ReplicaRoleTest, APrimaryRefusesShipments) {
  ReplicaRole role(1);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_EQ(role.CheckShipment(2, 3).code(), Code::kFailedPrecondition);
}

TEST(ReplicaRoleTest, AnOlderChainIsRefusedAndTheSameOneIsARepeat) {
  ReplicaRole role(1);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  EXPECT_EQ(role.Adopt(Chain(2, 2, {1})).code(), Code::kFailedPrecondition);
  EXPECT_EQ(role.epoch(), 3);
  EXPECT_TRUE(role.primary());
}

TEST(ReplicaRoleTest, AChainThatDoesNotNameThisTaskIsRefused) {
  ReplicaRole role(0);
  EXPECT_EQ(role.Adopt(Chain(1, 1, {2})).code(), Code::kFailedPrecondition);
  EXPECT_FALSE(role.configured());
}

// A primary that was paused while a backup was promoted learns it from the
// backup's refusal, and serves nobody until the chief gives it a new chain.
TEST(ReplicaRoleTest, ADeposedPrimaryServesNoMoreUntilANewerChain) {
  ReplicaRole role(1);
  ASSERT_TRUE(role.Adopt(Chain(3, 1, {2})).ok());
  role.Depose();
  EXPECT_FALSE(role.primary());
  EXPECT_TRUE(role.deposed());
  EXPECT_EQ(role.CheckClientRequest(3).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(role.Adopt(Chain(5, 2, {1})).ok());  // back as a backup
  EXPECT_FALSE(role.deposed());
  EXPECT_TRUE(role.CheckShipment(2, 5).ok());
}

TEST(ReplicaRoleTest, DescribesTheChain) {
  EXPECT_EQ(Chain(3, 1, {2, 0}).Describe(), "shard 1 epoch 3: primary ps:1, backups ps:2, ps:0");
  EXPECT_EQ(Chain(4, 1, {}).Describe(), "shard 1 epoch 4: primary ps:1, backups none");
}

}  // namespace
}  // namespace pst
