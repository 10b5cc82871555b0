#include "ps/replication/replicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <memory>

namespace pst {
namespace {

// A backup's answers, in turn: OK, unreachable, or refused for a newer epoch.
enum class Answer { kHold, kUnreachable, kNewerEpoch };

// Records what it ships; answers as told (kHold once the queue is empty).
// `gate` closed: every answer waits until it opens.
class FakeShipper : public BackupShipper {
 public:
  Status Send(int backup, int shard, int64_t epoch, const ShardState& state) override {
    MutexLock lock(mu_);
    shipments_.push_back({backup, shard, epoch, state.watermark});
    Answer answer = Answer::kHold;
    if (!answers_.empty()) {
      answer = answers_.front();
      answers_.pop_front();
    }
    owed_[backup] = answer;
    shipped_.NotifyAll();
    return Status::OK();
  }
  Status Await(int backup) override {
    MutexLock lock(mu_);
    ++awaits_;
    awaited_.NotifyAll();
    while (!open_) opened_.Wait(mu_);
    switch (owed_[backup]) {
      case Answer::kHold: return Status::OK();
      case Answer::kUnreachable: return Unavailable("ps:" + std::to_string(backup) + " is gone");
      case Answer::kNewerEpoch: return Aborted("ps:1 holds a newer epoch");
    }
    return Status::OK();
  }
  void Answers(std::deque<Answer> answers) {
    MutexLock lock(mu_);
    answers_ = std::move(answers);
  }
  void Close() {
    MutexLock lock(mu_);
    open_ = false;
  }
  void Open() {
    MutexLock lock(mu_);
    open_ = true;
    opened_.NotifyAll();
  }
  struct Shipment {
    int backup, shard;
    int64_t epoch;
    Watermark watermark;
  };
  std::vector<Shipment> shipments() const {
    MutexLock lock(mu_);
    return shipments_;
  }
  // Waits until the replicator has asked for at least `n` answers.
  void AwaitAnswersAsked(int n) {
    MutexLock lock(mu_);
    while (awaits_ < n) awaited_.Wait(mu_);
  }
  // Waits until at least `n` shipments were attempted.
  void AwaitShipments(size_t n) {
    MutexLock lock(mu_);
    while (shipments_.size() < n) shipped_.Wait(mu_);
  }

 private:
  mutable Mutex mu_;
  CondVar opened_, shipped_, awaited_;
  int awaits_ = 0;
  bool open_ = true;
  std::deque<Answer> answers_;
  std::map<int, Answer> owed_;  // by backup: the answer to its last shipment
  std::vector<Shipment> shipments_;
};

class ReplicatorTest : public ::testing::Test {
 protected:
  ReplicatorTest() {
    replicator_ = std::make_unique<Replicator>(
        /*shard=*/3, &shipper_,
        [this]() -> StatusOr<ShardState> {
          return ShardState{{{"w", values_}}, {applied_.load(), 0}};
        },
        [this] {
          return Watermark{applied_.load(), 0};
        },
        [this] { deposed_ = true; });
  }
  // A waiter for `applied` pushes; its future gets the status.
  std::future<Status> Wait(uint64_t applied) {
    auto done = std::make_shared<std::promise<Status>>();
    std::future<Status> f = done->get_future();
    replicator_->AfterReplicated({applied, 0}, [done](Status s) { done->set_value(s); });
    return f;
  }

  FakeShipper shipper_;
  const Tensor values_{DType::kFloat32, {4}};  // what every snapshot shares
  std::atomic<uint64_t> applied_{0};
  std::atomic<bool> deposed_{false};
  std::unique_ptr<Replicator> replicator_;
};

TEST_F(ReplicatorTest, WithoutBackupsAPushIsHeldAtOnce) {
  replicator_->SetChain(1, {});
  applied_ = 1;
  EXPECT_TRUE(Wait(1).get().ok());
  EXPECT_TRUE(shipper_.shipments().empty());
}

TEST_F(ReplicatorTest, APushIsAcknowledgedOnceEveryBackupHoldsIt) {
  shipper_.Close();  // the round that fills the new backups waits
  replicator_->SetChain(7, {1, 2});
  applied_ = 1;
  std::future<Status> held = Wait(1);
  shipper_.Open();
  EXPECT_TRUE(held.get().ok());
  const auto shipped = shipper_.shipments();
  ASSERT_GE(shipped.size(), 2u);
  ASSERT_EQ(shipped.size() % 2, 0u);  // every round ships to both, in chain order
  for (size_t i = 0; i < shipped.size(); ++i) {
    EXPECT_EQ(shipped[i].backup, i % 2 == 0 ? 1 : 2);
    EXPECT_EQ(shipped[i].shard, 3);
    EXPECT_EQ(shipped[i].epoch, 7);
  }
  EXPECT_EQ(shipped.back().watermark.applied, 1u);
  EXPECT_EQ(replicator_->bytes_shipped(), replicator_->rounds() * 2 * 16);
}

// A push applied while the backups answer writes the values in place: the
// round no longer shares them (copy-on-write would copy the whole shard).
TEST_F(ReplicatorTest, ARoundLetsGoOfItsSnapshotOnceSent) {
  shipper_.Close();
  replicator_->SetChain(1, {1, 2});
  // Sent, and the answers asked for (they wait at the gate): the round
  // lets go of its snapshot before it asks.
  shipper_.AwaitAnswersAsked(1);
  EXPECT_EQ(values_.buffer().use_count(), 1);
  shipper_.Open();
}

// Pushes applied while a round is on its way are held by the next round,
// all of them together.
TEST_F(ReplicatorTest, PushesArrivingDuringARoundShareTheNext) {
  replicator_->SetChain(1, {1});
  shipper_.Close();
  applied_ = 1;
  std::future<Status> first = Wait(1);
  shipper_.Open();  // the next shipment happens once pushes 2..10 wait
  shipper_.Close();
  std::vector<std::future<Status>> later;
  for (uint64_t n = 2; n <= 10; ++n) {
    applied_ = n;
    later.push_back(Wait(n));
  }
  shipper_.Open();
  EXPECT_TRUE(first.get().ok());
  for (auto& f : later) EXPECT_TRUE(f.get().ok());
  EXPECT_LE(replicator_->rounds(), 3u);  // never one round per push
}

// A sync push waits for its step's other gradients: no round ships the
// shard meanwhile; the push that completes the step brings the round.
TEST_F(ReplicatorTest, NoRoundShipsUntilTheStateCoversAWaiter) {
  shipper_.Close();
  replicator_->SetChain(1, {1});  // the fill round waits at the gate
  shipper_.Open();
  shipper_.AwaitShipments(1);
  applied_ = 1;
  std::future<Status> ahead = Wait(2);  // push 2 is not applied yet
  EXPECT_EQ(ahead.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  EXPECT_EQ(shipper_.shipments().size(), 1u);
  applied_ = 2;
  std::future<Status> completing = Wait(2);
  EXPECT_TRUE(ahead.get().ok());
  EXPECT_TRUE(completing.get().ok());
  EXPECT_EQ(shipper_.shipments().back().watermark.applied, 2u);
}

// A backup that does not answer holds the push back until the chief takes
// it out of the chain: an acknowledged push is on every live replica.
TEST_F(ReplicatorTest, AnUnreachableBackupIsRetriedUntilTheChainDropsIt) {
  replicator_->SetChain(1, {1});
  shipper_.Answers({Answer::kUnreachable, Answer::kUnreachable, Answer::kUnreachable});
  applied_ = 1;
  std::future<Status> waiting = Wait(1);
  shipper_.AwaitShipments(3);
  shipper_.Answers(std::deque<Answer>(1000, Answer::kUnreachable));
  replicator_->SetChain(2, {});
  EXPECT_TRUE(waiting.get().ok());
}

TEST_F(ReplicatorTest, ABackupOfANewerEpochDeposesThePrimary) {
  replicator_->SetChain(4, {1});
  shipper_.Answers({Answer::kNewerEpoch});
  applied_ = 1;
  const Status refused = Wait(1).get();
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("deposed"), std::string::npos) << refused.message();
  EXPECT_TRUE(deposed_.load());
}

// A stopping ps answers nothing more: the waiting push's callback is dropped.
TEST_F(ReplicatorTest, StoppingDropsWhatWaits) {
  replicator_->SetChain(1, {1});
  shipper_.Answers(std::deque<Answer>(1000000, Answer::kUnreachable));
  applied_ = 1;
  std::future<Status> waiting = Wait(1);
  shipper_.AwaitShipments(1);
  replicator_.reset();
  EXPECT_THROW(static_cast<void>(waiting.get()), std::future_error);
}

TEST_F(ReplicatorTest, ANewBackupIsFilledWithoutWaitingForAPush) {
  replicator_->SetChain(1, {});
  replicator_->SetChain(2, {1});
  shipper_.AwaitShipments(1);
  EXPECT_EQ(shipper_.shipments()[0].backup, 1);
  EXPECT_EQ(shipper_.shipments()[0].epoch, 2);
}

TEST_F(ReplicatorTest, RefusesPushesBeforeItsFirstChainAndOnceClosed) {
  applied_ = 1;
  EXPECT_EQ(Wait(1).get().code(), Code::kFailedPrecondition);
  replicator_->SetChain(1, {1});
  shipper_.Close();
  std::future<Status> waiting = Wait(1);
  replicator_->Close(FailedPrecondition("ps:0 is a backup of shard 3 now"));
  EXPECT_EQ(waiting.get().code(), Code::kFailedPrecondition);
  EXPECT_EQ(Wait(1).get().code(), Code::kFailedPrecondition);
  shipper_.Open();
  replicator_->SetChain(2, {});  // the primary again
  EXPECT_TRUE(Wait(1).get().ok());
}

TEST_F(ReplicatorTest, FailWaitingFailsEveryWaiter) {
  replicator_->SetChain(1, {1});
  shipper_.Close();
  applied_ = 1;
  std::future<Status> a = Wait(1), b = Wait(1);
  replicator_->FailWaiting(Aborted("restored"));
  EXPECT_EQ(a.get().code(), Code::kAborted);
  EXPECT_EQ(b.get().code(), Code::kAborted);
  shipper_.Open();
}

}  // namespace
}  // namespace pst
