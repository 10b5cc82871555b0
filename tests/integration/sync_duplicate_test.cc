// Sync mode against a real ps: a second push of one worker for one step is
// refused and does not count towards the N gradients of the step.
#include "common/clock.h"
#include "ps/shard_admin.h"
#include "tests/integration/ps_fixture.h"

namespace pst {
namespace {

class SyncDuplicateTest : public PsFixture {};

TEST_F(SyncDuplicateTest, SecondPushForAStepIsRefused) {
  ShardConfig config = DefaultConfig();
  config.mode = TrainingMode::kSync;
  config.replicas_to_aggregate = 2;
  StartPs({{"w", DType::kFloat32, {3}, Initializer::kZeros}}, {}, config);
  auto worker0 = NewClient(0);
  auto worker1 = NewClient(1);

  auto first = worker0->SyncPush({1}, {Filled({3}, 1.0f)}, 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->duplicate_shards, 0u);
  auto second = worker0->SyncPush({1}, {Filled({3}, 100.0f)}, 0);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->duplicate_shards, 1u);

  // Still one gradient short: nothing is applied yet.
  std::vector<Tensor> values;
  ASSERT_TRUE(worker0->Pull({1}, &values).ok());
  EXPECT_EQ(values[0].f32()[0], 0.0f);

  ASSERT_TRUE(worker1->SyncPush({1}, {Filled({3}, 3.0f)}, 0).ok());
  ASSERT_TRUE(worker0->Pull({1}, &values).ok());
  EXPECT_EQ(values[0].f32()[0], -2.0f);  // lr 1 * mean(1, 3): the 100 never counted

  auto stats =
      ShardAdmin(&*worker0).GetShardStatus(0, SteadyClock().Now() + std::chrono::seconds(10));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->store.duplicate_pushes, 1u);
  EXPECT_EQ(stats->store.sync_step, 1);
  EXPECT_EQ(stats->store.aggregated_per_worker, (std::vector<uint64_t>{1, 1}));

  // A push for the finished step is stale.
  auto late = worker1->SyncPush({1}, {Filled({3}, 5.0f)}, 0);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->stale_shards, 1u);
}

}  // namespace
}  // namespace pst
