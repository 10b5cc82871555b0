// Channel <-> RpcServer over real ZeroMQ TCP on 127.0.0.1.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "common/testing/gate.h"
#include "transport/channel.h"
#include "transport/frames.h"
#include "transport/server.h"

namespace pst {
namespace {

// Echoes the request's tensors back, doubled, in a PullReply.
OutgoingMessage Echo(const ReceivedMessage& request, RequestContext&) {
  OutgoingMessage reply;
  reply.type = wire::MessageType::PullReply;
  reply.step = request.step();
  if (request.tensors().empty()) {
    reply.status = InvalidArgument("nothing to echo");
    return reply;
  }
  for (const TensorView& v : request.tensors()) {
    Tensor t = v.ToTensor();
    for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] *= 2;
    reply.tensors.push_back({std::string(v.name), v.version, t});
  }
  return reply;
}

class ChannelServerTest : public ::testing::Test {
 protected:
  void StartServer(uint64_t cluster_id, std::vector<wire::MessageType> open_types = {}) {
    ServerOptions options;
    options.name = "echo:0";
    options.endpoint = "tcp://127.0.0.1:*";
    options.cluster_id = cluster_id;
    options.open_types = std::move(open_types);
    server_ = std::make_unique<RpcServer>(context_, options, Echo);
    ASSERT_TRUE(server_->Start().ok());
  }
  std::unique_ptr<Channel> Connect(uint64_t cluster_id, int timeout_ms = 5000) {
    ChannelOptions options;
    options.peer_name = "echo:0";
    options.endpoint = server_->bound_endpoint();
    options.cluster_id = cluster_id;
    options.rpc_timeout_ms = timeout_ms;
    return std::make_unique<Channel>(context_, options);
  }
  static OutgoingMessage Request(float value, int64_t step = 1) {
    OutgoingMessage m;
    m.type = wire::MessageType::PullRequest;
    m.step = step;
    Tensor t(DType::kFloat32, {3});
    for (int i = 0; i < 3; ++i) t.f32()[i] = value;
    m.tensors.push_back({"v", 5, t});
    return m;
  }

  zmq::context_t context_{1};
  std::unique_ptr<RpcServer> server_;
};

TEST_F(ChannelServerTest, CallReturnsReply) {
  StartServer(0);
  auto channel = Connect(0);
  auto reply = channel->Call(Request(1.5f));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_FLOAT_EQ(reply->tensors()[0].f32()[2], 3.0f);
  EXPECT_EQ(reply->tensors()[0].version, 5);
}

TEST_F(ChannelServerTest, PipelinedRequestsMatchTheirReplies) {
  StartServer(0);
  auto channel = Connect(0);
  PendingCalls calls;
  for (int i = 0; i < 8; ++i) {
    auto id = channel->Send(Request(static_cast<float>(i), i));
    ASSERT_TRUE(id.ok());
    calls.Add(channel.get(), *id);
  }
  ASSERT_TRUE(calls.WaitAll(channel->DefaultDeadline()).ok());
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(calls.replies()[i].step(), i);
    EXPECT_FLOAT_EQ(calls.replies()[i].tensors()[0].f32()[0], 2.0f * i);
  }
}

TEST_F(ChannelServerTest, ReceiveAnyTakesTheFirstReplyToAnyOfItsRequests) {
  StartServer(0);
  auto channel = Connect(0);
  auto abandoned = channel->Send(Request(0, 0));
  auto first = channel->Send(Request(1, 1));
  auto resent = channel->Send(Request(2, 2));
  ASSERT_TRUE(abandoned.ok() && first.ok() && resent.ok());
  // The server's handler threads may answer in any order: whichever of the
  // two replies comes first is taken, the abandoned request's is dropped,
  // and the other one is still there for its own id.
  auto reply = channel->ReceiveAny({*first, *resent}, channel->DefaultDeadline());
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_TRUE(reply->step() == 1 || reply->step() == 2) << reply->step();
  const int64_t other = 3 - reply->step();
  reply = channel->ReceiveAny({other == 1 ? *first : *resent}, channel->DefaultDeadline());
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->step(), other);
}

TEST_F(ChannelServerTest, ErrorReplyBecomesStatusNamingPeer) {
  StartServer(0);
  auto channel = Connect(0);
  OutgoingMessage empty;
  empty.type = wire::MessageType::PullRequest;
  auto reply = channel->Call(empty);
  EXPECT_EQ(reply.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(reply.status().message(), "echo:0: nothing to echo");
}

TEST_F(ChannelServerTest, OtherClusterIsRefused) {
  StartServer(77);
  auto reply = Connect(78)->Call(Request(1));
  EXPECT_EQ(reply.status().code(), Code::kPermissionDenied);
  EXPECT_NE(reply.status().message().find("cluster 78"), std::string::npos);
  EXPECT_EQ(reply.status().message().find("77"), std::string::npos);
  EXPECT_TRUE(Connect(77)->Call(Request(1)).ok());
}

TEST_F(ChannelServerTest, OpenTypesAcceptUnknownClusterId) {
  StartServer(77, {wire::MessageType::PullRequest});
  EXPECT_TRUE(Connect(0)->Call(Request(1)).ok());
  EXPECT_FALSE(Connect(78)->Call(Request(1)).ok());
}

TEST_F(ChannelServerTest, DeadlineNamesSilentPeer) {
  ChannelOptions options;
  options.peer_name = "ps:3";
  options.endpoint = "tcp://127.0.0.1:1";  // nothing listens there
  options.rpc_timeout_ms = 100;
  Channel channel(context_, options);
  auto reply = channel.Call(Request(1));
  EXPECT_EQ(reply.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(reply.status().message().find("ps:3 (tcp://127.0.0.1:1)"), std::string::npos);
}

TEST_F(ChannelServerTest, GarbageGetsErrorReplyAndServerKeepsServing) {
  StartServer(0);
  zmq::socket_t raw(context_, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect(server_->bound_endpoint());
  raw.send(zmq::buffer(std::string("\x01\x02garbage bytes")), zmq::send_flags::none);
  zmq::message_t frame;
  ASSERT_TRUE(raw.recv(frame));
  std::vector<zmq::message_t> frames;
  frames.push_back(std::move(frame));
  auto reply = DecodeMessage(std::move(frames), 1 << 20);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->type(), wire::MessageType::ErrorReply);
  EXPECT_EQ(reply->status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Connect(0)->Call(Request(2)).ok());
}

// A request of a type this server does not know (a newer client's) is
// refused with its request id, so that the client sees the refusal at once
// instead of waiting out its deadline.
TEST_F(ChannelServerTest, AnUnknownRequestTypeIsRefusedByItsRequestId) {
  StartServer(0);
  flatbuffers::FlatBufferBuilder fbb;
  wire::HeaderBuilder header(fbb);
  header.add_request_id(77);
  header.add_type(static_cast<wire::MessageType>(200));
  fbb.Finish(header.Finish());
  zmq::socket_t raw(context_, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect(server_->bound_endpoint());
  raw.send(zmq::buffer(fbb.GetBufferPointer(), fbb.GetSize()), zmq::send_flags::none);
  zmq::message_t frame;
  ASSERT_TRUE(raw.recv(frame));
  std::vector<zmq::message_t> frames;
  frames.push_back(std::move(frame));
  auto reply = DecodeMessage(std::move(frames), 1 << 20);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->type(), wire::MessageType::ErrorReply);
  EXPECT_EQ(reply->request_id(), 77u);
  EXPECT_NE(reply->status().message().find("unknown message type 200"), std::string::npos)
      << reply->status().message();
}

TEST_F(ChannelServerTest, ClientRefusesToSendOversizedMessage) {
  StartServer(0);
  ChannelOptions options;
  options.peer_name = "echo:0";
  options.endpoint = server_->bound_endpoint();
  options.max_message_bytes = 8;
  Channel channel(context_, options);
  EXPECT_EQ(channel.Send(Request(1)).status().code(), Code::kResourceExhausted);
}

// The handler threads' replies reach the I/O thread through the router
// itself: they are neither requests to limit (max_message_bytes) nor bytes
// received, and the endpoint the server reports is the one it was asked to
// bind, not the replies' inproc one.
TEST(HandlerReplyTest, AReplyLargerThanTheRequestLimitIsSentAndNotCountedAsReceived) {
  zmq::context_t context(1);
  ServerOptions options;
  options.name = "large-replies";
  options.endpoint = "tcp://127.0.0.1:*";
  options.max_message_bytes = 16 << 10;
  constexpr int64_t kReplyFloats = 64 << 10;  // 256 KiB
  RpcServer server(context, options, [](const ReceivedMessage& request, RequestContext&) {
    OutgoingMessage reply;
    reply.type = wire::MessageType::PullReply;
    reply.step = request.step();
    Tensor t(DType::kFloat32, {kReplyFloats});
    for (int64_t i = 0; i < kReplyFloats; ++i) t.f32()[i] = static_cast<float>(i);
    reply.tensors.push_back({"big", 1, t});
    return reply;
  });
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(server.bound_endpoint().rfind("tcp://127.0.0.1:", 0), 0u) << server.bound_endpoint();
  ChannelOptions channel_options;
  channel_options.peer_name = "large-replies";
  channel_options.endpoint = server.bound_endpoint();
  channel_options.rpc_timeout_ms = 10000;
  Channel channel(context, channel_options);
  for (int64_t step = 0; step < 3; ++step) {
    OutgoingMessage request;
    request.type = wire::MessageType::PullRequest;
    request.step = step;
    auto reply = channel.Call(request);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(reply->step(), step);
    ASSERT_EQ(reply->tensors().size(), 1u);
    EXPECT_EQ(reply->tensors()[0].f32()[kReplyFloats - 1], static_cast<float>(kReplyFloats - 1));
  }
  EXPECT_LT(server.bytes_in(), uint64_t{4} << 10);  // three small requests
  EXPECT_GE(server.bytes_out(), uint64_t{3} * kReplyFloats * sizeof(float));
}

TEST_F(ChannelServerTest, StopFinishesAndWaitReturns) {
  StartServer(0);
  EXPECT_TRUE(Connect(0)->Call(Request(1)).ok());
  server_->Stop();
  server_->Wait();
  EXPECT_FALSE(Connect(0, 200)->Call(Request(1)).ok());
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

// A handler that defers every request; the test answers them later from
// another thread, in reverse order.
TEST(DeferredReplyTest, RepliesSentLaterReachTheirRequests) {
  zmq::context_t context(1);
  std::mutex mu;
  std::vector<std::pair<DeferredReply, int64_t>> parked;
  ServerOptions options;
  options.name = "deferring";
  options.endpoint = "tcp://127.0.0.1:*";
  RpcServer server(context, options, [&](const ReceivedMessage& request, RequestContext& ctx) {
    std::lock_guard<std::mutex> lock(mu);
    parked.emplace_back(ctx.Defer(), request.step());
    return OutgoingMessage();
  });
  ASSERT_TRUE(server.Start().ok());
  ChannelOptions channel_options;
  channel_options.peer_name = "deferring";
  channel_options.endpoint = server.bound_endpoint();
  channel_options.rpc_timeout_ms = 5000;
  Channel channel(context, channel_options);
  PendingCalls calls;
  for (int64_t step = 0; step < 3; ++step) {
    OutgoingMessage m;
    m.type = wire::MessageType::JoinRequest;
    m.step = step;
    calls.Add(&channel, *channel.Send(m));
  }
  std::thread answer([&] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard<std::mutex> lock(mu);
      if (parked.size() < 3) continue;
      for (int i = 2; i >= 0; --i) {
        OutgoingMessage reply;
        reply.type = wire::MessageType::JoinReply;
        reply.step = 100 + parked[i].second;
        server.SendDeferred(std::move(parked[i].first), reply);
      }
      return;
    }
  });
  ASSERT_TRUE(calls.WaitAll(channel.DefaultDeadline()).ok());
  answer.join();
  for (int64_t step = 0; step < 3; ++step) {
    EXPECT_EQ(calls.replies()[step].step(), 100 + step);
  }
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

// A request picked by serve_inline is answered by the I/O thread even while
// the only handler thread is held: it never waits for a handler.
TEST(InlineServingTest, InlineRequestIsAnsweredWhileTheHandlerIsBusy) {
  zmq::context_t context(1);
  ServerOptions options;
  options.name = "inline";
  options.endpoint = "tcp://127.0.0.1:*";
  options.num_threads = 1;
  options.serve_inline = [](const ReceivedMessage& r) {
    return r.type() == wire::MessageType::PullRequest;
  };
  Gate gate;
  RpcServer server(context, options, [&gate](const ReceivedMessage& request, RequestContext&) {
    if (request.type() == wire::MessageType::PushRequest) gate.Pass();
    OutgoingMessage reply;
    reply.type = request.type() == wire::MessageType::PushRequest ? wire::MessageType::PushReply
                                                                  : wire::MessageType::PullReply;
    reply.step = request.step();
    return reply;
  });
  OpenOnExit open_on_exit{gate};
  ASSERT_TRUE(server.Start().ok());
  ChannelOptions channel_options;
  channel_options.peer_name = "inline";
  channel_options.endpoint = server.bound_endpoint();
  channel_options.rpc_timeout_ms = 5000;
  Channel channel(context, channel_options);
  OutgoingMessage push;
  push.type = wire::MessageType::PushRequest;
  push.step = 1;
  auto held = channel.Send(push);
  ASSERT_TRUE(held.ok());
  OutgoingMessage pull;
  pull.type = wire::MessageType::PullRequest;
  pull.step = 2;
  auto pulled = channel.Call(pull);
  ASSERT_TRUE(pulled.ok()) << pulled.status().ToString();
  EXPECT_EQ(pulled->step(), 2);
  gate.Open();
  auto pushed = channel.Receive(*held, channel.DefaultDeadline());
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->step(), 1);
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

class CurveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    keys_ = *NewCurveKeys();
    ServerOptions options;
    options.name = "secure:0";
    options.endpoint = "tcp://127.0.0.1:*";
    options.curve = keys_;
    server_ = std::make_unique<RpcServer>(server_context_, options, Echo);
    ASSERT_TRUE(server_->Start().ok());
  }
  // `timeout_ms`: short where a refusal (a timeout) is expected, long where
  // a CURVE handshake must succeed on a loaded machine (ASan in CI).
  StatusOr<ReceivedMessage> CallWith(std::optional<CurveKeys> keys, int timeout_ms = 500) {
    ChannelOptions options;
    options.peer_name = "secure:0";
    options.endpoint = server_->bound_endpoint();
    options.rpc_timeout_ms = timeout_ms;
    options.curve = std::move(keys);
    Channel channel(client_context_, options);
    OutgoingMessage m;
    m.type = wire::MessageType::PullRequest;
    m.tensors.push_back({"v", 0, Tensor(DType::kFloat32, {2})});
    return channel.Call(m);
  }
  zmq::context_t server_context_{1}, client_context_{1};
  CurveKeys keys_;
  std::unique_ptr<RpcServer> server_;
};

TEST_F(CurveTest, ClusterKeyIsServed) { EXPECT_TRUE(CallWith(keys_, 10000).ok()); }

TEST_F(CurveTest, PlainClientIsRefused) {
  EXPECT_EQ(CallWith(std::nullopt).status().code(), Code::kDeadlineExceeded);
}

TEST_F(CurveTest, ClientWithAnotherKeyIsRefused) {
  // Knows the server's public key but holds another key pair.
  CurveKeys stranger = *NewCurveKeys();
  zmq::socket_t socket(client_context_, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::curve_serverkey, keys_.public_key);
  socket.set(zmq::sockopt::curve_publickey, stranger.public_key);
  socket.set(zmq::sockopt::curve_secretkey, stranger.secret_key);
  socket.set(zmq::sockopt::rcvtimeo, 500);
  socket.connect(server_->bound_endpoint());
  OutgoingMessage m;
  m.type = wire::MessageType::PullRequest;
  auto frames = EncodeMessage(m, {1, 0, wire::Role::Client, 0});
  socket.send(frames[0], zmq::send_flags::dontwait);
  zmq::message_t reply;
  EXPECT_FALSE(socket.recv(reply).has_value());
  EXPECT_TRUE(CallWith(keys_, 10000).ok());  // the server still serves the cluster
}

TEST(CurveKeysTest, SaveThenLoad) {
  const std::string dir = ::testing::TempDir();
  CurveKeys keys = *NewCurveKeys();
  ASSERT_TRUE(SaveCurveKeys(dir, keys).ok());
  auto loaded = LoadCurveKeys(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->public_key, keys.public_key);
  EXPECT_EQ(loaded->secret_key, keys.secret_key);
  EXPECT_EQ(LoadCurveKeys(dir + "/nowhere").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pst
