// The in-process transport keeps the semantics the services rely on.
#include "transport/in_process.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/clock.h"

namespace pst {
namespace {

OutgoingMessage Reply(int64_t step, Status status = Status::OK()) {
  OutgoingMessage reply;
  reply.type = wire::MessageType::PullReply;
  reply.step = step;
  reply.status = std::move(status);
  return reply;
}

// Answers with the request's step; a step < 0 gets an error reply.
OutgoingMessage Echo(const ReceivedMessage& request, RequestContext&) {
  if (request.step() < 0) return Reply(0, InvalidArgument("negative step"));
  return Reply(request.step());
}

class InProcessTest : public ::testing::Test {
 protected:
  Server& Serve(const std::string& endpoint, Server::Handler handler, uint64_t cluster_id = 0) {
    ServerOptions options;
    options.name = endpoint;
    options.endpoint = endpoint;
    options.cluster_id = cluster_id;
    options.max_message_bytes = 4096;
    servers_.push_back(transport_.Listen(options, std::move(handler)));
    EXPECT_TRUE(servers_.back()->Start().ok());
    return *servers_.back();
  }
  std::unique_ptr<Connection> Connect(const std::string& endpoint, uint64_t cluster_id = 0,
                                      int timeout_ms = 1000) {
    ChannelOptions options;
    options.peer_name = endpoint;
    options.endpoint = endpoint;
    options.cluster_id = cluster_id;
    options.rpc_timeout_ms = timeout_ms;
    return transport_.Connect(options);
  }
  static OutgoingMessage Request(int64_t step) {
    OutgoingMessage m;
    m.type = wire::MessageType::PullRequest;
    m.step = step;
    return m;
  }

  InProcessTransport transport_;
  std::vector<std::unique_ptr<Server>> servers_;
};

TEST_F(InProcessTest, PipelinedRequestsMatchTheirReplies) {
  Serve("a", Echo);
  auto c = Connect("a");
  auto id1 = c->Send(Request(1));
  auto id2 = c->Send(Request(2));
  ASSERT_TRUE(id1.ok() && id2.ok());
  auto r2 = c->Receive(*id2, c->DefaultDeadline());  // drops the reply to id1
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->step(), 2);
  EXPECT_EQ(c->Receive(*id1, SteadyClock().Now()).status().code(), Code::kDeadlineExceeded);
}

TEST_F(InProcessTest, ErrorReplyBecomesAnErrorNamingThePeer) {
  Serve("ps:3", Echo);
  auto reply = Connect("ps:3")->Call(Request(-1));
  EXPECT_EQ(reply.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(reply.status().message(), "ps:3: negative step");
}

TEST_F(InProcessTest, NoServerMeansDeadlineExceededNamingThePeer) {
  auto reply = Connect("nobody", 0, /*timeout_ms=*/1)->Call(Request(1));
  EXPECT_EQ(reply.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(reply.status().message().find("no reply from nobody"), std::string::npos);
}

TEST_F(InProcessTest, OtherClustersAreRefusedExceptOpenTypesWithIdZero) {
  Serve("a", Echo, /*cluster_id=*/9);
  EXPECT_TRUE(Connect("a", 9)->Call(Request(1)).ok());
  EXPECT_EQ(Connect("a", 8)->Call(Request(1)).status().code(), Code::kPermissionDenied);
}

TEST_F(InProcessTest, TooLargeIsRefused) {
  Serve("a", Echo);
  OutgoingMessage big = Request(1);
  big.tensors.push_back({"t", 0, Tensor(DType::kFloat32, {2048})});
  EXPECT_EQ(Connect("a")->Call(big).status().code(), Code::kResourceExhausted);
}

TEST_F(InProcessTest, DeferredReplyComesFromAnotherThread) {
  std::optional<DeferredReply> parked;
  Server& server = Serve("chief", [&parked](const ReceivedMessage&, RequestContext& c) {
    parked = c.Defer();
    return OutgoingMessage();
  });
  auto c = Connect("chief");
  auto id = c->Send(Request(1));
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(parked.has_value());
  std::thread later([&] { server.SendDeferred(std::move(*parked), Reply(42)); });
  auto reply = c->Receive(*id, c->DefaultDeadline());
  later.join();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->step(), 42);
}

TEST_F(InProcessTest, WaitAllCollectsFromSeveralServersAndNamesTheSilent) {
  Serve("a", Echo);
  Serve("b", Echo);
  auto a = Connect("a"), b = Connect("b"), c = Connect("c", 0, 1);
  PendingCalls calls;
  calls.Add(a.get(), *a->Send(Request(1)));
  calls.Add(b.get(), *b->Send(Request(2)));
  ASSERT_TRUE(calls.WaitAll(SteadyClock().Now() + std::chrono::seconds(1)).ok());
  EXPECT_EQ(calls.replies()[1].step(), 2);
  PendingCalls silent;
  silent.Add(a.get(), *a->Send(Request(3)));
  silent.Add(c.get(), *c->Send(Request(4)));
  Status status = silent.WaitAll(SteadyClock().Now());
  EXPECT_EQ(status.code(), Code::kDeadlineExceeded);
  EXPECT_NE(status.message().find("c (c)"), std::string::npos) << status.ToString();
}

// A wait for some calls keeps the replies of the others it drains (they
// share the connection): a later wait finds them answered.
TEST_F(InProcessTest, WaitingForSomeCallsKeepsTheOthersReplies) {
  Serve("a", Echo);
  auto a = Connect("a"), silent = Connect("c", 0, 1);
  PendingCalls calls;
  calls.Add(a.get(), *a->Send(Request(1)));
  calls.Add(a.get(), *a->Send(Request(2)));
  calls.Add(silent.get(), *silent->Send(Request(3)));
  const auto soon = SteadyClock().Now() + std::chrono::seconds(1);
  ASSERT_TRUE(calls.WaitAll(soon, nullptr, {false, true, false}).ok());
  EXPECT_EQ(calls.replies()[1].step(), 2);
  ASSERT_TRUE(calls.WaitAll(soon, nullptr, {true, false, false}).ok());
  EXPECT_EQ(calls.replies()[0].step(), 1);
  Status status = calls.WaitAll(SteadyClock().Now(), nullptr, {false, false, true});
  EXPECT_EQ(status.code(), Code::kDeadlineExceeded);
  EXPECT_EQ(status.message().find("a (a)"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace pst
