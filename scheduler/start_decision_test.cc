// DecideStart: when a starting chief carries on from the running shards, and
// why it restores a checkpoint otherwise.
#include "scheduler/start_decision.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

ShardAtStart Holding(int64_t sync_step, int64_t global_step = 0) {
  return ShardAtStart{true, true, sync_step, global_step};
}

TEST(StartDecisionTest, AFirstStartRestoresWithoutComplaint) {
  const StartDecision d = DecideStart(false, {ShardAtStart{}, ShardAtStart{}}, {}, 0);
  EXPECT_FALSE(d.carry_on);
  EXPECT_EQ(d.why, "");
}

TEST(StartDecisionTest, AsyncCarriesOnFromTheGlobalStepShard) {
  const StartDecision d = DecideStart(false, {Holding(0, -1), Holding(0, 812)}, {0, 1}, 1);
  EXPECT_TRUE(d.carry_on);
  EXPECT_EQ(d.step, 812);
}

TEST(StartDecisionTest, SyncCarriesOnWhenEveryAggregatingShardIsAtOneStep) {
  // ps:0 holds only the global step: it aggregates nothing.
  const StartDecision d =
      DecideStart(true, {Holding(0, 120), Holding(120), Holding(120)}, {1, 2}, 0);
  EXPECT_TRUE(d.carry_on);
  EXPECT_EQ(d.step, 120);
}

TEST(StartDecisionTest, SyncShardsAtDifferentStepsAreRestoredAndSaySo) {
  const StartDecision d = DecideStart(true, {Holding(121), Holding(120)}, {0, 1}, 0);
  EXPECT_FALSE(d.carry_on);
  EXPECT_EQ(d.why, "the shards applied different numbers of sync steps (ps:0 at 121, ps:1 at 120)");
}

TEST(StartDecisionTest, AShardWithoutTheRunOrSilentIsRestored) {
  StartDecision d = DecideStart(false, {Holding(0, 50), ShardAtStart{}, ShardAtStart{}}, {}, 0);
  EXPECT_FALSE(d.carry_on);
  EXPECT_EQ(d.why, "ps:1, ps:2 hold none of this cluster's variables");
  d = DecideStart(true, {Holding(7), ShardAtStart{false, false, 0, 0}}, {0, 1}, 0);
  EXPECT_FALSE(d.carry_on);
  EXPECT_EQ(d.why, "ps:1 does not answer for this cluster");
}

}  // namespace
}  // namespace pst
