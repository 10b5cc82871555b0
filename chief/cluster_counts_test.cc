#include "chief/cluster_counts.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

ShardStatus Shard(uint64_t staleness_sum, uint64_t staleness_count, int64_t staleness_max,
                  uint64_t dropped, uint64_t stale_pushes, std::vector<uint64_t> per_worker) {
  ShardStatus s;
  s.store.staleness_sum = staleness_sum;
  s.store.staleness_count = staleness_count;
  s.store.staleness_max = staleness_max;
  s.store.gradients_dropped = dropped;
  s.store.gradients_scaled = 1;
  s.store.stale_pushes = stale_pushes;
  s.store.aggregated_per_worker = std::move(per_worker);
  return s;
}

TEST(ClusterCountsTest, NoShardsCountNothing) {
  const ClusterCounts c = CountsOf({}, 2, /*sync=*/true);
  EXPECT_EQ(c.aggregated, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(c.staleness_mean(), 0);
  EXPECT_EQ(c.stale_dropped, 0u);
  EXPECT_TRUE(c.shards.empty());
}

TEST(ClusterCountsTest, SumsStalenessAndDropsOverShards) {
  const ClusterCounts c =
      CountsOf({Shard(6, 3, 4, 2, 0, {}), Shard(4, 2, 7, 5, 0, {})}, 1, /*sync=*/false);
  EXPECT_EQ(c.staleness_sum, 10u);
  EXPECT_EQ(c.staleness_count, 5u);
  EXPECT_DOUBLE_EQ(c.staleness_mean(), 2.0);
  EXPECT_EQ(c.staleness_max, 7);
  EXPECT_EQ(c.dropped, 7u);
  EXPECT_EQ(c.scaled, 2u);
  EXPECT_EQ(c.shards.size(), 2u);
}

TEST(ClusterCountsTest, PerPushCountsTakeTheLargestShard) {
  // Each push reaches both shards: summing would count it twice.
  const std::vector<ShardStatus> shards = {Shard(0, 0, 0, 3, 9, {5, 2, 7}),
                                           Shard(0, 0, 0, 4, 8, {6, 1})};
  const ClusterCounts sync = CountsOf(shards, 3, /*sync=*/true);
  EXPECT_EQ(sync.stale_dropped, 9u) << "sync: stale pushes";
  EXPECT_EQ(sync.aggregated, (std::vector<uint64_t>{6, 2, 7}));
  const ClusterCounts async = CountsOf(shards, 3, /*sync=*/false);
  EXPECT_EQ(async.stale_dropped, 4u) << "async: gradients the policy dropped";
}

TEST(ClusterCountsTest, WorkersBeyondTheClusterAreIgnored) {
  const ClusterCounts c = CountsOf({Shard(0, 0, 0, 0, 0, {1, 2, 3})}, 2, /*sync=*/true);
  EXPECT_EQ(c.aggregated, (std::vector<uint64_t>{1, 2}));
}

}  // namespace
}  // namespace pst
