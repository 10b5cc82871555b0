// The shard keeper's decisions: which answers mean a lost ps, and which
// shards a sync step waits for. Carrying them out needs running ps (the
// chief_faults and fault integration tests).
#include "chief/shard_keeper.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(ShardTroubleTest, NothingWrongWithAnInitializedShard) {
  ShardStatus s;
  s.store.initialized = true;
  EXPECT_EQ(ShardTrouble(0, s), "");
}

TEST(ShardTroubleTest, AShardThatDoesNotAnswerIsDown) {
  const std::string trouble = ShardTrouble(2, DeadlineExceeded("no answer from ps:2"));
  EXPECT_EQ(trouble.rfind("ps:2 is down: ", 0), 0u) << trouble;
  EXPECT_NE(trouble.find("no answer from ps:2"), std::string::npos) << trouble;
}

TEST(ShardTroubleTest, AShardWithoutItsVariablesRestarted) {
  EXPECT_EQ(ShardTrouble(1, ShardStatus()), "ps:1 restarted without its variables");
}

TEST(SyncShardsTest, OnlyShardsHoldingTrainableVariables) {
  // Round-robin over 3 shards: the global step (int64) alone on ps:0.
  PlacementOptions options;
  options.num_shards = 3;
  const std::vector<VariableSpec> variables = {{"w", DType::kFloat32, {4, 2}},
                                               {"b", DType::kFloat32, {2}}};
  StatusOr<Placement> placement = Placement::Compute(WithGlobalStep(variables), options);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  EXPECT_EQ(SyncShards(*placement), (std::vector<int>{1, 2}));
}

TEST(SyncShardsTest, EachShardOnce) {
  PlacementOptions options;
  options.num_shards = 2;
  const std::vector<VariableSpec> variables = {
      {"a", DType::kFloat32, {2}}, {"b", DType::kFloat32, {2}}, {"c", DType::kFloat32, {2}}};
  StatusOr<Placement> placement = Placement::Compute(WithGlobalStep(variables), options);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  EXPECT_EQ(SyncShards(*placement), (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace pst
