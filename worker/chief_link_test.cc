// ChiefLink against an in-process RpcServer standing in for the chief.
#include "worker/chief_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "transport/server.h"
#include "transport/zmq_transport.h"

namespace pst {
namespace {

class ChiefLinkTest : public ::testing::Test {
 protected:
  // Serves token requests with `handler`, recording each request's step.
  void StartChief(RpcServer::Handler handler) {
    ServerOptions options;
    options.name = "chief";
    options.endpoint = "tcp://127.0.0.1:*";
    options.num_threads = 1;  // handlers run one at a time
    server_ = std::make_unique<RpcServer>(
        context_, options,
        [this, handler](const ReceivedMessage& request, RequestContext& context) {
          {
            MutexLock lock(mu_);
            steps_sent_.push_back(request.step());
          }
          return handler(request, context);
        });
    ASSERT_TRUE(server_->Start().ok());
    ChannelOptions link;
    link.peer_name = "chief";
    link.endpoint = server_->bound_endpoint();
    link.role = wire::Role::Worker;
    link_ = std::make_unique<ChiefLink>(transport_, link);
  }
  // A token of `step`, aggregating step % 3 + 1 gradients.
  static OutgoingMessage Token(int64_t step) {
    OutgoingMessage reply;
    reply.type = wire::MessageType::TokenReply;
    reply.step = step;
    reply.extras = [step](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.join = wire::CreateJoinInfo(fbb, 0, wire::ClusterState::Training, 0, 0, step % 3 + 1);
      return extras;
    };
    return reply;
  }
  std::vector<int64_t> steps_sent() {
    MutexLock lock(mu_);
    return steps_sent_;
  }

  // Declared before the server: its handler threads use them until it is
  // destroyed.
  Mutex mu_;
  std::vector<int64_t> steps_sent_ GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  zmq::context_t context_{1};
  ZmqTransport transport_{context_};
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<ChiefLink> link_;
};

TEST_F(ChiefLinkTest, RequestsSayWhichTokenTheWorkerLastReceivedAndTokensTheirN) {
  StartChief(
      [](const ReceivedMessage& request, RequestContext&) { return Token(request.step() + 5); });
  const auto deadline = SteadyClock().Now() + std::chrono::seconds(10);
  auto first = link_->TakeToken(deadline, stop_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->step, 4);
  EXPECT_EQ((*first)->replicas, 2);
  auto second = link_->TakeToken(deadline, stop_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->step, 9);
  EXPECT_EQ((*second)->replicas, 1);
  EXPECT_EQ(steps_sent(), (std::vector<int64_t>{-1, 4}));
}

// A worker whose step failed returns its token: its next request says it
// holds none, so the chief grants the current step again.
TEST_F(ChiefLinkTest, AReturnedTokenIsAskedForAgain) {
  StartChief([](const ReceivedMessage&, RequestContext&) { return Token(7); });
  const auto deadline = SteadyClock().Now() + std::chrono::seconds(10);
  ASSERT_TRUE(link_->TakeToken(deadline, stop_).ok());
  link_->ReturnToken();
  ASSERT_TRUE(link_->TakeToken(deadline, stop_).ok());
  ASSERT_TRUE(link_->TakeToken(deadline, stop_).ok());
  EXPECT_EQ(steps_sent(), (std::vector<int64_t>{-1, -1, 7}));
}

// A chief back from a restart answers the oldest of the requests queued
// meanwhile; the worker, which re-sent its request since, takes it.
TEST_F(ChiefLinkTest, TakesTheTokenAnsweringAnEarlierRequest) {
  std::optional<DeferredReply> first;
  StartChief([this, &first](const ReceivedMessage&, RequestContext& context) {
    if (!first) {
      first = context.Defer();
    } else {
      context.Defer();  // the re-sent request stays unanswered
      server_->SendDeferred(std::move(*first), Token(3));
    }
    return OutgoingMessage();
  });
  auto token = link_->TakeToken(SteadyClock().Now() + std::chrono::seconds(10), stop_);
  // The handler holds `first`, a local: no request may reach it once the
  // test returns (a late re-sent request corrupted the heap).
  link_.reset();
  server_.reset();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  ASSERT_TRUE(token->has_value());
  EXPECT_EQ((*token)->step, 3);
  EXPECT_EQ(steps_sent().size(), 2u);
}

TEST_F(ChiefLinkTest, WaitingPastTheDeadlineNamesJoinTimeout) {
  StartChief([](const ReceivedMessage&, RequestContext& context) {
    context.Defer();
    return OutgoingMessage();
  });
  auto token = link_->TakeToken(SteadyClock().Now() + std::chrono::milliseconds(100), stop_);
  EXPECT_EQ(token.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(token.status().message().find("--join_timeout_ms"), std::string::npos)
      << token.status().ToString();
}

// A signal (stop set from another thread) ends the wait for a token at once,
// not at the deadline.
TEST_F(ChiefLinkTest, AStopEndsTheWaitForAToken) {
  StartChief([](const ReceivedMessage&, RequestContext& context) {
    context.Defer();
    return OutgoingMessage();
  });
  std::thread signal([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop_.store(true);
  });
  auto token = link_->TakeToken(SteadyClock().Now() + std::chrono::seconds(600), stop_);
  signal.join();
  EXPECT_EQ(token.status().code(), Code::kAborted) << token.status().ToString();
}

}  // namespace
}  // namespace pst
