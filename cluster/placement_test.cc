#include "cluster/placement.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

std::vector<VariableSpec> Specs() {
  return WithGlobalStep({{"w0", DType::kFloat32, {784, 256}, Initializer::kGlorotUniform},
                         {"b0", DType::kFloat32, {256}, Initializer::kZeros},
                         {"w1", DType::kFloat32, {256, 10}, Initializer::kGlorotUniform},
                         {"b1", DType::kFloat32, {10}, Initializer::kZeros}});
}

TEST(PlacementTest, RoundRobinInCreationOrder) {
  auto p = Placement::Compute(Specs(), {2, PlacementStrategy::kRoundRobin, 0});
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->slices().size(), 5u);
  const char* names[] = {kGlobalStepName, "w0", "b0", "w1", "b1"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(p->slices()[i].name, names[i]);
    EXPECT_EQ(p->slices()[i].shard, i % 2);
  }
  EXPECT_EQ(p->SlicesOnShard(1), (std::vector<int>{1, 3}));
}

TEST(PlacementTest, DeterministicAndHashSensitive) {
  auto a = Placement::Compute(Specs(), {3, PlacementStrategy::kRoundRobin, 0});
  auto b = Placement::Compute(Specs(), {3, PlacementStrategy::kRoundRobin, 0});
  auto c = Placement::Compute(Specs(), {2, PlacementStrategy::kRoundRobin, 0});
  EXPECT_EQ(a->Hash(), b->Hash());
  EXPECT_NE(a->Hash(), c->Hash());
  EXPECT_EQ(a->Describe(), b->Describe());
}

TEST(PlacementTest, GreedyBalancesBytes) {
  auto p = Placement::Compute(Specs(), {2, PlacementStrategy::kGreedy, 0});
  ASSERT_TRUE(p.ok());
  // global_step -> 0, w0 (big) -> 1, then everything else to the lighter shard 0.
  EXPECT_EQ(p->slices()[1].shard, 1);
  EXPECT_EQ(p->slices()[2].shard, 0);
  EXPECT_EQ(p->slices()[3].shard, 0);
  EXPECT_EQ(p->slices()[4].shard, 0);
}

TEST(PlacementTest, PartitionsLargeVariablesIntoRowSlices) {
  // w0 is 784*256*4 = 802816 bytes; 256 KiB slices -> 4 parts of 196 rows.
  auto p = Placement::Compute(Specs(), {2, PlacementStrategy::kRoundRobin, 256 << 10});
  ASSERT_TRUE(p.ok());
  const auto& parts = p->SlicesOfVariable(1);
  ASSERT_EQ(parts.size(), 4u);
  int64_t rows = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const Slice& s = p->slices()[parts[k]];
    EXPECT_EQ(s.name, "w0/part_" + std::to_string(k));
    EXPECT_EQ(s.row_begin, rows);
    EXPECT_EQ(s.shape[1], 256);
    rows = s.row_end;
  }
  EXPECT_EQ(rows, 784);
  // Slices are placed like variables: shards alternate.
  EXPECT_NE(p->slices()[parts[0]].shard, p->slices()[parts[1]].shard);
}

TEST(PlacementTest, UnevenRowsSplitEvenly) {
  std::vector<VariableSpec> specs = {{"v", DType::kFloat32, {10, 3}, Initializer::kZeros}};
  auto p = Placement::Compute(specs, {1, PlacementStrategy::kRoundRobin, 40});
  ASSERT_EQ(p->slices().size(), 3u);  // 120 B / 40 B
  EXPECT_EQ(p->slices()[0].shape[0], 4);
  EXPECT_EQ(p->slices()[1].shape[0], 3);
  EXPECT_EQ(p->slices()[2].shape[0], 3);
}

TEST(PlacementTest, PartitionThenReassembleIsIdentity) {
  std::vector<VariableSpec> specs = {{"v", DType::kFloat32, {37, 5}, Initializer::kZeros}};
  auto p = Placement::Compute(specs, {3, PlacementStrategy::kRoundRobin, 100});
  ASSERT_GT(p->slices().size(), 3u);
  Tensor full(DType::kFloat32, {37, 5});
  for (int i = 0; i < 37 * 5; ++i) full.f32()[i] = 0.25f * i - 3;
  Tensor rebuilt(DType::kFloat32, {37, 5});
  for (int idx : p->SlicesOfVariable(0)) {
    const Slice& s = p->slices()[idx];
    Tensor part = ExtractRows(s, full);
    EXPECT_EQ(part.shape(), s.shape);
    CopyRowsInto(s, part.data(), &rebuilt);
  }
  for (int i = 0; i < 37 * 5; ++i) EXPECT_EQ(rebuilt.f32()[i], full.f32()[i]);
}

TEST(PlacementTest, RejectsBadOptions) {
  EXPECT_FALSE(Placement::Compute(Specs(), {0, PlacementStrategy::kRoundRobin, 0}).ok());
  EXPECT_FALSE(ParsePlacementStrategy("random").ok());
  EXPECT_EQ(*ParsePlacementStrategy("greedy"), PlacementStrategy::kGreedy);
}

}  // namespace
}  // namespace pst
