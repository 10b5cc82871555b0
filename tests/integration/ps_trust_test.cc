// What a peer that knows the cluster id (but is not the chief) can do to a
// running ps: nothing to the shard as a whole. Initialize, save, restore and
// shutdown are refused unless they come from the chief (role Chief, from the
// chief host of the cluster spec), and a gradient holding NaN or Inf is
// refused whole, naming its variable. Each refusal leaves the model as it
// was and the ps keeps serving.
#include <cmath>
#include <filesystem>
#include <limits>

#include "common/bfloat16.h"
#include "ps/shard_admin.h"
#include "tests/integration/ps_fixture.h"
#include "transport/frames.h"
#include "transport/message.h"

namespace pst {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every variable's bytes and version, as a raw pull returns them.
struct ModelState {
  std::vector<std::string> bytes;
  std::vector<int64_t> versions;
  bool operator==(const ModelState& o) const { return bytes == o.bytes && versions == o.versions; }
};

class PsTrustTest : public PsFixture {
 protected:
  // Sends `request` with `role` from the loopback address `source` on a
  // socket of its own, and returns the reply.
  StatusOr<ReceivedMessage> Call(OutgoingMessage request, wire::Role role,
                                 const std::string& source) {
    return CallWithFrames(EncodeMessage(request, {++request_id_, kClusterId, role, 0}), source);
  }
  // Sends `frames` as they are (a test may have tampered with them).
  StatusOr<ReceivedMessage> CallWithFrames(std::vector<zmq::message_t> frames,
                                           const std::string& source) {
    zmq::socket_t socket(context_, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, 20000);
    // libzmq's "source;destination" form picks the address we connect from.
    socket.connect("tcp://" + source + ":0;127.0.0.1:" + std::to_string(cluster_->ports()[1]));
    for (size_t i = 0; i < frames.size(); ++i) {
      socket.send(frames[i],
                  i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
    std::vector<zmq::message_t> reply;
    do {
      zmq::message_t frame;
      if (!socket.recv(frame)) return DeadlineExceeded("no reply from the ps");
      reply.push_back(std::move(frame));
    } while (reply.back().more());
    return DecodeMessage(std::move(reply), 1 << 20);
  }

  ModelState Model() {
    OutgoingMessage pull;
    pull.type = wire::MessageType::PullRequest;
    for (const VariableSpec& v : placement_->variables()) pull.names.push_back(v.name);
    auto reply = Call(std::move(pull), wire::Role::Worker, "127.0.0.1");
    EXPECT_TRUE(reply.ok() && reply->status().ok())
        << (reply.ok() ? reply->status() : reply.status()).ToString();
    ModelState state;
    if (!reply.ok()) return state;
    for (const TensorView& t : reply->tensors()) {
      state.bytes.emplace_back(static_cast<const char*>(t.data), t.num_bytes);
      state.versions.push_back(t.version);
    }
    return state;
  }

  uint64_t request_id_ = 0;
};

// ---------------------------------------------------------------------------
// Administrative requests.

class PsAdminTest : public PsTrustTest {
 protected:
  void SetUp() override {
    checkpoint_dir_ = MakeTestDir("ps-trust-checkpoints");
    StartPs({{"w", DType::kFloat32, {4}, Initializer::kGlorotUniform}},
            {"--checkpoint_dir=" + checkpoint_dir_});
    ASSERT_TRUE(ShardAdmin(&*NewChiefClient()).SaveCheckpoint("ckpt-good", 0).ok());
    // Move the model away from the checkpoint, so a restore would show.
    ASSERT_TRUE(NewClient()->Push({1}, {Filled({4}, 1.0f)}, true).ok());
    before_ = Model();
  }

  // One of each request that changes or stops the shard as a whole.
  static std::vector<OutgoingMessage> AdminRequests() {
    std::vector<OutgoingMessage> requests(4);
    requests[0].type = wire::MessageType::InitRequest;
    requests[0].tensors.push_back({kGlobalStepName, 0, Tensor(DType::kInt64, {})});
    requests[0].tensors.push_back({"w", 0, Filled({4}, 0.0f)});
    requests[0].extras = [](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.init = wire::CreateInitParams(
          fbb, wire::CreateOptimizerParams(fbb, fbb.CreateString("sgd"), 1.0f));
      return extras;
    };
    requests[1].type = wire::MessageType::SaveRequest;
    requests[1].extras = [](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.checkpoint = wire::CreateCheckpointParams(fbb, fbb.CreateString("ckpt-new"));
      return extras;
    };
    requests[2].type = wire::MessageType::RestoreRequest;
    requests[2].extras = [](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.checkpoint = wire::CreateCheckpointParams(fbb, fbb.CreateString("ckpt-good"));
      return extras;
    };
    requests[3].type = wire::MessageType::ShutdownRequest;
    return requests;
  }

  void ExpectEveryAdminRequestRefused(wire::Role role, const std::string& source) {
    for (OutgoingMessage& request : AdminRequests()) {
      const std::string type = wire::EnumNameMessageType(request.type);
      auto reply = Call(std::move(request), role, source);
      ASSERT_TRUE(reply.ok()) << type << ": " << reply.status().ToString();
      const Status status = reply->status();
      EXPECT_EQ(status.code(), Code::kPermissionDenied) << type << ": " << status.ToString();
      EXPECT_NE(status.message().find(type), std::string::npos) << status.message();
      // Nothing a prober could use: no address, no cluster id.
      EXPECT_EQ(status.message().find("127.0.0"), std::string::npos) << status.message();
      EXPECT_EQ(status.message().find(std::to_string(kClusterId)), std::string::npos)
          << status.message();
    }
    EXPECT_FALSE(std::filesystem::exists(checkpoint_dir_ + "/ckpt-new"));
    EXPECT_TRUE(Model() == before_);
    EXPECT_TRUE(ps_->Running()) << ps_->Log();
    // Still serving: a worker's push applies.
    auto pushed = NewClient()->Push({1}, {Filled({4}, 1.0f)}, true);
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    EXPECT_EQ(pushed->applied, 1u);
  }

  std::string checkpoint_dir_;
  ModelState before_;
};

TEST_F(PsAdminTest, AWorkerCannotAdministerTheShard) {
  ExpectEveryAdminRequestRefused(wire::Role::Worker, "127.0.0.1");
}

TEST_F(PsAdminTest, ChiefRoleFromAnotherAddressCannotAdministerTheShard) {
  ExpectEveryAdminRequestRefused(wire::Role::Chief, "127.0.0.2");
}

// The same requests from the real chief's address are served (so the
// refusals above are for who sent them, not for what they hold).
TEST_F(PsAdminTest, TheChiefAdministersTheShard) {
  std::vector<OutgoingMessage> requests = AdminRequests();
  for (auto i : {1, 2, 0}) {  // save, restore, initialize
    const std::string type = wire::EnumNameMessageType(requests[i].type);
    auto reply = Call(std::move(requests[i]), wire::Role::Chief, "127.0.0.1");
    ASSERT_TRUE(reply.ok()) << type << ": " << reply.status().ToString();
    EXPECT_TRUE(reply->status().ok()) << type << ": " << reply->status().ToString();
  }
  EXPECT_TRUE(std::filesystem::exists(checkpoint_dir_ + "/ckpt-new"));
  EXPECT_FALSE(Model() == before_);  // initialized to zeros
  auto reply = Call(std::move(requests[3]), wire::Role::Chief, "127.0.0.1");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_TRUE(reply->status().ok()) << reply->status().ToString();
  EXPECT_EQ(ps_->Wait(std::chrono::seconds(30)), 0) << ps_->Log();
}

// ---------------------------------------------------------------------------
// Non-finite gradients.

class PsNonFiniteGradientTest : public PsTrustTest {
 protected:
  void StartAsync() {
    StartPs({{"w", DType::kFloat32, {4}, Initializer::kGlorotUniform},
             {"b", DType::kFloat32, {3}, Initializer::kZeros}});
  }
  // A push of a finite gradient for w and `bad_b` for b is refused, names b,
  // and changes nothing; the next good push applies.
  void ExpectRefused(Tensor bad_b) {
    const ModelState before = Model();
    auto client = NewClient();
    auto pushed = client->Push({1, 2}, {Filled({4}, 0.5f), bad_b}, true);
    EXPECT_EQ(pushed.status().code(), Code::kInvalidArgument) << pushed.status().ToString();
    EXPECT_NE(pushed.status().message().find("'b'"), std::string::npos)
        << pushed.status().message();
    EXPECT_TRUE(Model() == before);

    auto good = client->Push({1, 2}, {Filled({4}, 0.5f), Filled({3}, 2.0f)}, true);
    ASSERT_TRUE(good.ok()) << good.status().ToString();
    EXPECT_EQ(good->applied, 2u);
    EXPECT_EQ(good->global_step, 1);
    std::vector<Tensor> b;
    ASSERT_TRUE(client->Pull({2}, &b).ok());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(b[0].f32()[i], -2.0f);  // SGD, lr 1, from 0
    EXPECT_TRUE(ps_->Running()) << ps_->Log();
  }
};

TEST_F(PsNonFiniteGradientTest, NaNPushIsRefused) {
  StartAsync();
  Tensor bad = Filled({3}, 1.0f);
  bad.f32()[1] = kNaN;
  ExpectRefused(bad);
}

TEST_F(PsNonFiniteGradientTest, InfPushIsRefused) {
  StartAsync();
  Tensor bad = Filled({3}, 1.0f);
  bad.f32()[2] = kInf;
  ExpectRefused(bad);
}

TEST_F(PsNonFiniteGradientTest, MinusInfPushIsRefused) {
  StartAsync();
  Tensor bad = Filled({3}, 1.0f);
  bad.f32()[0] = -kInf;
  ExpectRefused(bad);
}

// Sync: the refused push is not accumulated and its worker has not
// contributed to the step, so its next good push completes the step.
TEST_F(PsNonFiniteGradientTest, SyncNaNPushIsNotAccumulated) {
  ShardConfig config = DefaultConfig();
  config.mode = TrainingMode::kSync;
  config.replicas_to_aggregate = 2;
  StartPs({{"w", DType::kFloat32, {3}, Initializer::kZeros}}, {}, config);
  auto worker0 = NewClient(0);
  auto worker1 = NewClient(1);
  ASSERT_TRUE(worker0->SyncPush({1}, {Filled({3}, 1.0f)}, 0).ok());
  const ModelState before = Model();

  Tensor bad = Filled({3}, 1.0f);
  bad.f32()[1] = kNaN;
  auto refused = worker1->SyncPush({1}, {bad}, 0);
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("'w'"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(Model() == before);

  auto good = worker1->SyncPush({1}, {Filled({3}, 3.0f)}, 0);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->stale_shards, 0u);
  EXPECT_EQ(good->duplicate_shards, 0u);
  std::vector<Tensor> w;
  ASSERT_TRUE(worker0->Pull({1}, &w).ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(w[0].f32()[i], -2.0f);  // lr 1 * mean(1, 3)
  EXPECT_TRUE(ps_->Running()) << ps_->Log();
}

// ---------------------------------------------------------------------------
// The bfloat16 wire (--wire_dtype=bfloat16).

class PsBFloat16Test : public PsTrustTest {
 protected:
  static float Rounded(float x) { return BFloat16ToFloat(FloatToBFloat16(x)); }
};

// The shard keeps float32: a bfloat16 push applies its exact (rounded)
// gradient, a float32 pull sees the float32 result, a bfloat16 pull its
// nearest bfloat16; the int64 global step is untouched by the narrowing.
TEST_F(PsBFloat16Test, PushesAndPullsNarrowOnlyOnTheWire) {
  StartPs({{"w", DType::kFloat32, {4}, Initializer::kZeros}});
  client_wire_dtype_ = DType::kBFloat16;
  auto narrow = NewClient();
  client_wire_dtype_ = DType::kFloat32;
  auto wide = NewClient(1);
  std::vector<Tensor> w;
  ASSERT_TRUE(narrow->Pull({1}, &w).ok());  // versions for the pushes
  ASSERT_TRUE(narrow->Push({1}, {Filled({4}, 0.1f)}, true).ok());
  ASSERT_TRUE(narrow->Push({1}, {Filled({4}, 0.3f)}, true).ok());
  const float master = (0.0f - Rounded(0.1f)) - Rounded(0.3f);  // SGD, lr 1
  ASSERT_NE(Rounded(master), master);                           // the pull below has to round
  ASSERT_TRUE(wide->Pull({1}, &w).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w[0].f32()[i], master);
  ASSERT_TRUE(narrow->Pull({1}, &w).ok());
  EXPECT_EQ(w[0].dtype(), DType::kFloat32);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w[0].f32()[i], Rounded(master));
  auto step = narrow->GlobalStep();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 2);
}

// A bfloat16 descriptor over a frame of float32 length (a sender that
// forgot to narrow) is refused before it reaches the variables: an error
// reply, nothing applied, and the ps serves on.
TEST_F(PsBFloat16Test, FrameOfTheWrongLengthIsRefusedAndChangesNothing) {
  StartPs({{"w", DType::kFloat32, {4}, Initializer::kGlorotUniform}});
  const ModelState before = Model();
  OutgoingMessage push;
  push.type = wire::MessageType::PushRequest;
  push.tensors.push_back({"w", 0, Tensor(DType::kBFloat16, {4})});
  std::vector<zmq::message_t> frames =
      EncodeMessage(push, {++request_id_, kClusterId, wire::Role::Worker, 0});
  const Tensor float32_bytes = Filled({4}, 1.0f);
  frames[1] = zmq::message_t(float32_bytes.data(), float32_bytes.num_bytes());
  auto reply = CallWithFrames(std::move(frames), "127.0.0.1");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status().code(), Code::kInvalidArgument) << reply->status().ToString();
  EXPECT_NE(reply->status().message().find("frame holds 16 bytes, descriptor says 8"),
            std::string::npos)
      << reply->status().message();
  EXPECT_TRUE(Model() == before);
  auto step = NewClient()->GlobalStep();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 0);

  client_wire_dtype_ = DType::kBFloat16;
  auto good = NewClient()->Push({1}, {Filled({4}, 0.5f)}, true);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->applied, 1u);
  EXPECT_TRUE(ps_->Running()) << ps_->Log();
}

}  // namespace
}  // namespace pst
