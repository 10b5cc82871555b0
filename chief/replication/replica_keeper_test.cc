// ReplicaKeeper over in-process shards: a lost primary is replaced by its
// backup without a rollback, and a shard whose every replica is lost is
// reported for a checkpoint restore.
#include "chief/replication/replica_keeper.h"

#include <gtest/gtest.h>

#include "model/layers/initializer.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 12;
constexpr std::chrono::milliseconds kPatience{300};

class ReplicaKeeperTest : public ::testing::Test {
 protected:
  ReplicaKeeperTest() {
    auto placement = Placement::Compute(
        WithGlobalStep({{"a", DType::kFloat32, {2}}, {"b", DType::kFloat32, {2}}}),
        PlacementOptions{3});
    EXPECT_TRUE(placement.ok());
    placement_ = std::make_unique<Placement>(*placement);
    for (const VariableSpec& spec : placement_->variables()) {
      values_.push_back(InitializeVariable(spec, 1));
    }
    config_.optimizer.learning_rate = 1.0f;
    config_.global_step_variable = kGlobalStepName;
    chief_ = Routed(wire::Role::Chief);
    admin_ = std::make_unique<ShardAdmin>(chief_.get());
    keeper_ = std::make_unique<ReplicaKeeper>(3, 2, admin_.get(), &board_, [this](int task) {
      return admin_->InitializeTask(task, config_, values_);
    });
    EXPECT_TRUE(admin_->Initialize(config_, values_).ok());
    EXPECT_TRUE(keeper_->SendAll(kPatience).ok());
  }
  std::unique_ptr<PsClient> Routed(wire::Role role) {
    std::unique_ptr<PsClient> client = shards_.Client(*placement_, kCluster, role);
    client->RouteByChains(&board_);
    return client;
  }
  // One async step of a worker: every variable, the global step counted.
  Status Step(PsClient& worker) {
    std::vector<Tensor> grads;
    for (int v : {1, 2}) grads.push_back(Tensor(DType::kFloat32, {2}));
    return worker.Push({1, 2}, grads, true).status();
  }

  InProcessShards shards_{3, nullptr, nullptr, {}, /*replicated=*/true, 300};
  std::unique_ptr<Placement> placement_;
  std::vector<Tensor> values_;
  ShardConfig config_;
  RoutesBoard board_;
  std::unique_ptr<PsClient> chief_;
  std::unique_ptr<ShardAdmin> admin_;  // over chief_
  std::unique_ptr<ReplicaKeeper> keeper_;
};

TEST_F(ReplicaKeeperTest, NothingChangesWhileEveryTaskAnswers) {
  StatusOr<std::vector<int>> lost = keeper_->Repair(kPatience);
  ASSERT_TRUE(lost.ok());
  EXPECT_TRUE(lost->empty());
  EXPECT_EQ(keeper_->chains().chain(0).epoch, 1);
  EXPECT_EQ(keeper_->lost_tasks(), 0);
}

TEST_F(ReplicaKeeperTest, ALostPrimaryIsReplacedAndTrainingGoesOnWithoutARollback) {
  auto worker = Routed(wire::Role::Worker);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Step(*worker).ok());
  shards_.server(0).Stop();  // the primary of shard 0, which holds the global step
  StatusOr<std::vector<int>> lost = keeper_->Repair(kPatience);
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_TRUE(lost->empty());
  EXPECT_EQ(keeper_->chains().chain(0).Describe(), "shard 0 epoch 2: primary ps:1, backups none");
  EXPECT_EQ(keeper_->chains().promotions(), 1);
  EXPECT_EQ(keeper_->lost_tasks(), 1);
  ASSERT_TRUE(Step(*worker).ok());
  EXPECT_EQ(worker->GlobalStep().value(), 4);  // 3 before the loss, 1 after: none lost
  // Looking again changes nothing more.
  ASSERT_TRUE(keeper_->Repair(kPatience).ok());
  EXPECT_EQ(keeper_->chains().chain(0).epoch, 2);
}

TEST_F(ReplicaKeeperTest, AShardWithEveryReplicaLostIsReported) {
  shards_.server(1).Stop();
  shards_.server(2).Stop();  // shard 1 lived on ps:1 and ps:2
  StatusOr<std::vector<int>> lost = keeper_->Repair(kPatience);
  ASSERT_TRUE(lost.ok());
  EXPECT_EQ(*lost, (std::vector<int>{1}));
  // The chief's probe saw it first; its recovery asks again, and must hear
  // it too (it once heard nothing, and went on with an empty shard).
  lost = keeper_->Repair(kPatience);
  ASSERT_TRUE(lost.ok());
  EXPECT_EQ(*lost, (std::vector<int>{1}));
}

}  // namespace
}  // namespace pst
