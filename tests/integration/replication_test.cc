// Replicated shards with real ps processes (--ps_replicas=2, 3 ps): the
// test is the chief (a ReplicaKeeper looking at the ps every 100 ms) and
// three workers (threads, each with its own routed PsClient) push unit
// gradients to a counter on every shard. Whatever happens to the ps, each
// counter and the global step end at exactly the pushes acknowledged: no
// update lost, none applied twice, no rollback.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <thread>

#include "chief/replication/replica_keeper.h"
#include "common/clock.h"
#include "model/layers/initializer.h"
#include "ps/shard_admin.h"
#include "tests/integration/local_cluster.h"
#include "transport/zmq_transport.h"

namespace pst {
namespace {

using std::chrono::milliseconds;

constexpr int kPs = 3;
constexpr int kWorkers = 3;
constexpr uint64_t kCluster = 5150;
constexpr milliseconds kPatience{500};  // the keeper's per-task probe

class ReplicationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<LocalCluster>(
        kPs, 1, MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    for (int k = 0; k < kPs; ++k) cluster_->StartTask("ps", k, {"--ps_threads=2"});
    // The global step and c2 on shard 0, c0 on 1, c1 on 2.
    auto placement =
        Placement::Compute(WithGlobalStep({{"c0", DType::kFloat32, {4}, Initializer::kZeros},
                                           {"c1", DType::kFloat32, {4}, Initializer::kZeros},
                                           {"c2", DType::kFloat32, {4}, Initializer::kZeros}}),
                           PlacementOptions{kPs});
    ASSERT_TRUE(placement.ok());
    placement_ = std::make_unique<Placement>(*placement);
    for (const VariableSpec& spec : placement_->variables()) {
      values_.push_back(InitializeVariable(spec, 1));
    }
    config_.optimizer.learning_rate = 1.0f;
    config_.global_step_variable = kGlobalStepName;
    chief_ = Client(wire::Role::Chief, 0);
    admin_ = std::make_unique<ShardAdmin>(chief_.get());
    for (int k = 0; k < kPs; ++k) {
      ASSERT_TRUE(admin_->GetShardStatus(k, SteadyClock().Now() + std::chrono::seconds(30)).ok())
          << cluster_->task("ps", k).Log();
    }
    keeper_ = std::make_unique<ReplicaKeeper>(kPs, 2, admin_.get(), &board_, [this](int task) {
      return admin_->InitializeTask(task, config_, values_);
    });
    ASSERT_TRUE(admin_->Initialize(config_, values_).ok());
    ASSERT_TRUE(keeper_->SendAll(std::chrono::seconds(5)).ok());
    chief_loop_ = std::thread([this] {
      while (!stop_.load()) {
        StatusOr<std::vector<int>> lost = keeper_->Repair(kPatience);
        if (!lost.ok() || !lost->empty()) {
          ADD_FAILURE() << "a shard was lost whole: "
                        << (lost.ok() ? std::to_string(lost->front()) : lost.status().ToString());
        }
        lost_tasks_ = keeper_->lost_tasks();
        promotions_ = keeper_->chains().promotions();
        std::this_thread::sleep_for(milliseconds(100));
      }
    });
  }
  void TearDown() override {
    stop_ = true;
    if (chief_loop_.joinable()) chief_loop_.join();
    for (std::thread& w : workers_) w.join();
  }

  std::unique_ptr<PsClient> Client(wire::Role role, int index) {
    ClusterSpec spec;
    for (int k = 0; k < kPs; ++k) spec.ps.push_back({"127.0.0.1", cluster_->ports()[1 + k]});
    ClientIdentity identity;
    identity.role = role;
    identity.index = index;
    identity.cluster_id = kCluster;
    identity.rpc_timeout_ms = 30000;
    auto client = std::make_unique<PsClient>(transport_, spec, *placement_, identity);
    client->RouteByChains(&board_);
    return client;
  }
  // Each worker pushes -1 to every counter `pushes` times (SGD at rate 1:
  // +1 each), counting the pushes acknowledged. With `overlap`, as a worker
  // under --overlap: each push goes out with a pull behind it, and is
  // acknowledged while the next one is made.
  void StartWorkers(int pushes, bool overlap = false) {
    for (int w = 0; w < kWorkers; ++w) {
      workers_.emplace_back([this, w, pushes, overlap] {
        auto client = Client(wire::Role::Worker, w);
        std::vector<Tensor> minus_one(3, Tensor(DType::kFloat32, {4}));
        for (Tensor& t : minus_one) {
          t = Tensor(DType::kFloat32, {4});
          for (int i = 0; i < 4; ++i) t.f32()[i] = -1.0f;
        }
        std::vector<Tensor> values;
        auto finish = [&] {
          StatusOr<std::optional<PushSummary>> acked = client->FinishPush();
          if (acked.ok() && acked->has_value()) ++acknowledged_;
          return acked.status();
        };
        for (int i = 0; i < pushes; ++i) {
          Status pushed;
          if (overlap) {
            pushed = finish();
            if (pushed.ok())
              pushed = client->StartPushThenPull({1, 2, 3}, minus_one, true, {1, 2, 3}, &values);
          } else {
            pushed = client->Push({1, 2, 3}, minus_one, true).status();
            if (pushed.ok()) ++acknowledged_;
          }
          if (!pushed.ok()) {
            ADD_FAILURE() << "worker " << w << ": " << pushed.ToString();
            ++failed_workers_;
            return;
          }
        }
        if (Status last = finish(); !last.ok()) {
          ADD_FAILURE() << "worker " << w << ": " << last.ToString();
          ++failed_workers_;
        }
      });
    }
  }
  // Until `n` pushes are acknowledged (or a worker failed, which it reports).
  void AwaitAcknowledged(int n) {
    while (acknowledged_.load() < n && failed_workers_.load() == 0) {
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  // Waits until the keeper has seen `lost` tasks out of the chains.
  void AwaitLostTasks(int lost) {
    for (int i = 0; i < 3000 && lost_tasks_.load() != lost; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    ASSERT_EQ(lost_tasks_.load(), lost);
  }
  // Every counter and the global step are the pushes acknowledged.
  void ExpectExactlyTheAcknowledgedPushes() {
    for (std::thread& w : workers_) w.join();
    workers_.clear();
    std::vector<Tensor> values;
    ASSERT_TRUE(Client(wire::Role::Client, 0)->Pull({0, 1, 2, 3}, &values).ok());
    const int n = acknowledged_.load();
    EXPECT_EQ(values[0].i64()[0], n);
    for (int v = 1; v <= 3; ++v) {
      for (int i = 0; i < 4; ++i) EXPECT_EQ(values[v].f32()[i], n) << "variable " << v;
    }
  }
  void Restart(int ps) { cluster_->StartTask("ps", ps, {"--ps_threads=2"}); }
  // Waits until ps `task` holds a replica of each of its home shards filled
  // by the shard's primary at the current epoch.
  void AwaitFilled(int task) {
    auto probe = Client(wire::Role::Client, 0);
    for (int i = 0; i < 1000; ++i) {
      StatusOr<ShardStatus> s =
          ShardAdmin(&*probe).GetShardStatus(task, SteadyClock().Now() + kPatience);
      int filled = 0;
      if (s.ok()) {
        for (const ReplicaLoad& r : s->replicas) filled += r.filled_at_epoch == r.epoch;
      }
      if (filled == 2) return;
      std::this_thread::sleep_for(milliseconds(20));
    }
    FAIL() << "ps:" << task << " was not filled again";
  }

  zmq::context_t context_{1};
  ZmqTransport transport_{context_};
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<Placement> placement_;
  std::vector<Tensor> values_;
  ShardConfig config_;
  RoutesBoard board_;
  std::unique_ptr<PsClient> chief_;
  std::unique_ptr<ShardAdmin> admin_;  // over chief_
  std::unique_ptr<ReplicaKeeper> keeper_;
  std::thread chief_loop_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  std::atomic<int> acknowledged_{0};
  std::atomic<int> failed_workers_{0};
  std::atomic<int> lost_tasks_{0};
  std::atomic<int64_t> promotions_{0};
};

TEST_F(ReplicationTest, AKilledPsCostsNoUpdateAndNoRollback) {
  StartWorkers(300);
  AwaitAcknowledged(150);
  cluster_->task("ps", 0).Signal(SIGKILL);  // the global step's primary
  ExpectExactlyTheAcknowledgedPushes();
  EXPECT_EQ(acknowledged_.load(), kWorkers * 300);
  EXPECT_EQ(promotions_.load(), 1);
}

// The same with each push acknowledged while the next is made (--overlap).
TEST_F(ReplicationTest, AKilledPsCostsNoUpdateWithAcknowledgementsOverlapped) {
  StartWorkers(300, /*overlap=*/true);
  AwaitAcknowledged(150);
  cluster_->task("ps", 0).Signal(SIGKILL);
  ExpectExactlyTheAcknowledgedPushes();
  EXPECT_EQ(acknowledged_.load(), kWorkers * 300);
  EXPECT_EQ(promotions_.load(), 1);
}

// The killed ps comes back, is filled again as a backup, and the next loss,
// of the primary it backs, is survived too.
TEST_F(ReplicationTest, ARestartedPsRejoinsAndASecondLossIsSurvived) {
  StartWorkers(400);
  AwaitAcknowledged(100);
  cluster_->task("ps", 1).Signal(SIGKILL);
  AwaitLostTasks(1);
  Restart(1);
  AwaitLostTasks(0);
  AwaitFilled(1);
  // ps:2 is now shard 1's primary (promoted), and ps:1 its backup again.
  cluster_->task("ps", 2).Signal(SIGKILL);
  ExpectExactlyTheAcknowledgedPushes();
  EXPECT_EQ(acknowledged_.load(), kWorkers * 400);
  EXPECT_EQ(promotions_.load(), 3);  // shard 1 twice, shard 2 once
}

// A primary stopped past the keeper's patience is replaced; when it wakes,
// the pushes it still takes by the old epoch are refused by its backup (now
// the primary) and never acknowledged, so nothing is applied twice.
TEST_F(ReplicationTest, APausedPrimaryWakesUpFencedOff) {
  StartWorkers(300);
  AwaitAcknowledged(150);
  cluster_->task("ps", 0).Signal(SIGSTOP);
  AwaitLostTasks(1);
  std::this_thread::sleep_for(milliseconds(500));  // workers move to the new primary
  cluster_->task("ps", 0).Signal(SIGCONT);
  AwaitLostTasks(0);  // back: initialized again and a backup
  ExpectExactlyTheAcknowledgedPushes();
  EXPECT_EQ(acknowledged_.load(), kWorkers * 300);
}

}  // namespace
}  // namespace pst
