// A running ps receives hostile or broken messages on a raw socket: each gets
// an error reply, nothing changes, and the ps keeps serving.
#include "tests/integration/ps_fixture.h"
#include "transport/message.h"

namespace pst {
namespace {

class PsHostileInputTest : public PsFixture {
 protected:
  void SetUp() override {
    StartPs({{"w", DType::kFloat32, {4, 4}, Initializer::kGlorotUniform}},
            {"--max_message_bytes=65536"});
    raw_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
    raw_->set(zmq::sockopt::linger, 0);
    raw_->set(zmq::sockopt::rcvtimeo, 20000);
    raw_->connect(endpoint());
    ASSERT_TRUE(NewClient()->Pull({1}, &before_).ok());
  }

  void SendFrames(std::vector<zmq::message_t> frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
      raw_->send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore
                                                   : zmq::send_flags::none);
    }
  }
  // The next reply on the raw socket, decoded.
  ReceivedMessage NextReply() {
    std::vector<zmq::message_t> frames;
    zmq::message_t frame;
    do {
      EXPECT_TRUE(raw_->recv(frame)) << "no reply from the ps";
      frames.push_back(std::move(frame));
    } while (frames.back().more());
    auto reply = DecodeMessage(std::move(frames), 1 << 20);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return std::move(reply).value();
  }
  std::vector<zmq::message_t> Push(const std::string& name, Shape shape,
                                   uint64_t cluster_id = kClusterId) {
    OutgoingMessage m;
    m.type = wire::MessageType::PushRequest;
    m.tensors.push_back({name, 0, Tensor(DType::kFloat32, std::move(shape))});
    return EncodeMessage(m, {7, cluster_id, wire::Role::Worker, 0});
  }
  void TearDown() override {
    // The model is unchanged and the ps still serves correct pulls.
    std::vector<Tensor> after;
    ASSERT_TRUE(NewClient()->Pull({1}, &after).ok());
    for (int i = 0; i < 16; ++i) EXPECT_EQ(after[0].f32()[i], before_[0].f32()[i]);
    EXPECT_TRUE(ps_->Running()) << ps_->Log();
  }

  std::unique_ptr<zmq::socket_t> raw_;
  std::vector<Tensor> before_;
};

TEST_F(PsHostileInputTest, GarbageBytes) {
  std::vector<zmq::message_t> frames;
  frames.emplace_back(std::string("\xde\xad\xbe\xef garbage, not a flatbuffer"));
  SendFrames(std::move(frames));
  ReceivedMessage reply = NextReply();
  EXPECT_EQ(reply.type(), wire::MessageType::ErrorReply);
  EXPECT_EQ(reply.status().code(), Code::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("verification"), std::string::npos);
}

TEST_F(PsHostileInputTest, TruncatedHeader) {
  auto frames = Push("w", {4, 4});
  frames[0] = zmq::message_t(frames[0].data(), frames[0].size() / 2);
  SendFrames(std::move(frames));
  EXPECT_EQ(NextReply().status().code(), Code::kInvalidArgument);
}

TEST_F(PsHostileInputTest, WrongShapeTensor) {
  SendFrames(Push("w", {2, 8}));
  ReceivedMessage reply = NextReply();
  EXPECT_EQ(reply.request_id(), 7u);
  EXPECT_EQ(reply.status().code(), Code::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("[2,8]"), std::string::npos);
}

TEST_F(PsHostileInputTest, UnknownVariable) {
  SendFrames(Push("no_such_variable", {4, 4}));
  ReceivedMessage reply = NextReply();
  EXPECT_EQ(reply.status().code(), Code::kNotFound);
  EXPECT_NE(reply.status().message().find("no_such_variable"), std::string::npos);
}

TEST_F(PsHostileInputTest, FrameDisagreeingWithDescriptor) {
  auto frames = Push("w", {4, 4});
  frames[1] = zmq::message_t(10);
  SendFrames(std::move(frames));
  EXPECT_EQ(NextReply().status().code(), Code::kInvalidArgument);
}

TEST_F(PsHostileInputTest, AnotherClustersMessage) {
  SendFrames(Push("w", {4, 4}, /*cluster_id=*/999));
  EXPECT_EQ(NextReply().status().code(), Code::kPermissionDenied);
}

TEST_F(PsHostileInputTest, OversizedMessage) {
  // Two 40 KB frames: each under --max_message_bytes=65536, together over it.
  OutgoingMessage m;
  m.type = wire::MessageType::PushRequest;
  m.tensors.push_back({"w", 0, Tensor(DType::kFloat32, {10000})});
  m.tensors.push_back({"w", 0, Tensor(DType::kFloat32, {10000})});
  SendFrames(EncodeMessage(m, {8, kClusterId, wire::Role::Worker, 0}));
  EXPECT_EQ(NextReply().status().code(), Code::kResourceExhausted);
}

}  // namespace
}  // namespace pst
