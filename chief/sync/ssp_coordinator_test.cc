// SspCoordinator: replies now or later, the clock log, the workers gone
// (from the caller), the end of training. A fake sender catches the deferred replies.
#include "chief/sync/ssp_coordinator.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace pst {
namespace {

class FakeReplies : public ReplySender {
 public:
  void SendDeferred(DeferredReply to, const OutgoingMessage& reply) override {
    EXPECT_EQ(reply.type, wire::MessageType::ClockReply);
    sent[to.address].push_back(reply.step);
  }
  std::map<std::string, std::vector<int64_t>> sent;  // by address ("worker:0")
};

using Clocks = std::vector<int64_t>;

class SspCoordinatorTest : public ::testing::Test {
 protected:
  SspCoordinatorTest() {
    auto log = std::make_unique<std::ostringstream>();
    log_ = log.get();
    ssp_ = std::make_unique<SspCoordinator>(/*num_workers=*/2, /*bound=*/0, /*train_steps=*/10,
                                            &replies_, std::move(log));
  }
  // The clock of the reply now, or nullopt when the request is parked.
  std::optional<int64_t> Ask(int worker, int64_t completed,
                             std::vector<bool> gone = {false, false}) {
    RequestContext context("worker:" + std::to_string(worker), ++request_id_);
    const OutgoingMessage reply = ssp_->HandleClockRequest(worker, completed, gone, context);
    if (context.deferred()) return std::nullopt;
    EXPECT_EQ(reply.type, wire::MessageType::ClockReply);
    return reply.step;
  }
  Clocks Sent(int worker) { return replies_.sent["worker:" + std::to_string(worker)]; }

  FakeReplies replies_;
  std::ostringstream* log_;
  std::unique_ptr<SspCoordinator> ssp_;
  uint64_t request_id_ = 0;
};

TEST_F(SspCoordinatorTest, LogsEveryGrantInOrder) {
  EXPECT_EQ(Ask(0, 0), 0);
  EXPECT_EQ(Ask(1, 0), 0);
  EXPECT_EQ(Ask(0, 1), std::nullopt);
  EXPECT_EQ(Ask(1, 1), 1);
  EXPECT_EQ(Sent(0), Clocks{1});
  EXPECT_EQ(log_->str(),
            "# ssp_clocks 1\n"
            "worker\tclock\tslowest\n"
            "0\t0\t0\n"
            "1\t0\t0\n"
            "0\t1\t1\n"  // released by worker 1's request, before its own grant
            "1\t1\t1\n");
}

TEST_F(SspCoordinatorTest, AWorkerGoneStopsHoldingTheOthers) {
  EXPECT_EQ(Ask(0, 0), 0);
  EXPECT_EQ(Ask(1, 0), 0);
  EXPECT_EQ(Ask(0, 1), std::nullopt);
  // Repeated a second later, after worker 1 was declared dead.
  EXPECT_EQ(Ask(0, 1, {false, true}), 1);
}

TEST_F(SspCoordinatorTest, AGoodbyeBeforeTheLastStepReleasesTheParked) {
  EXPECT_EQ(Ask(0, 0), 0);
  EXPECT_EQ(Ask(1, 0), 0);
  EXPECT_EQ(Ask(0, 1), std::nullopt);
  ssp_->WorkerLeft(1, /*global_step=*/5);
  EXPECT_EQ(Sent(0), Clocks{1});
}

TEST_F(SspCoordinatorTest, TheGoodbyeAtTrainStepsStopsTheParked) {
  EXPECT_EQ(Ask(0, 0), 0);
  EXPECT_EQ(Ask(1, 0), 0);
  EXPECT_EQ(Ask(0, 1), std::nullopt);
  ssp_->WorkerLeft(1, /*global_step=*/10);
  EXPECT_EQ(Sent(0), Clocks{-1});
  EXPECT_EQ(Ask(0, 1), -1);
}

TEST_F(SspCoordinatorTest, CloseStopsEveryone) {
  EXPECT_EQ(Ask(0, 0), 0);
  EXPECT_EQ(Ask(1, 0), 0);
  EXPECT_EQ(Ask(0, 1), std::nullopt);
  ssp_->Close();
  EXPECT_EQ(Sent(0), Clocks{-1});
  EXPECT_EQ(Ask(1, 1), -1);
}

}  // namespace
}  // namespace pst
