// PsService's request handling over the in-process transport: what a ps
// answers to pulls, pushes, bad shapes, unknown variables, strangers and
// sync pushes of the wrong step. No processes, no sleeps.
#include "ps/ps_service.h"

#include <gtest/gtest.h>

#include "model/layers/initializer.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"
#include "ps/transport_shipper.h"
#include "transport/frames.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 77;

class PsServiceTest : public ::testing::Test {
 protected:
  // One shard holding "w" [2,3] = 1..6 (and the global step).
  void Init(TrainingMode mode = TrainingMode::kAsync, int replicas = 1) {
    auto placement = Placement::Compute(WithGlobalStep({{"w", DType::kFloat32, {2, 3}}}), {1});
    ASSERT_TRUE(placement.ok());
    placement_ = std::make_unique<Placement>(*placement);
    std::vector<Tensor> values;
    for (const VariableSpec& spec : placement_->variables()) {
      values.push_back(InitializeVariable(spec, 1));
    }
    for (int i = 0; i < 6; ++i) values[1].f32()[i] = static_cast<float>(i + 1);
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.global_step_variable = kGlobalStepName;
    config.mode = mode;
    config.replicas_to_aggregate = replicas;
    auto chief = shards_.Client(*placement_, kCluster, wire::Role::Chief);
    ASSERT_TRUE(ShardAdmin(&*chief).Initialize(config, values).ok());
  }
  static OutgoingMessage Push(Shape shape, float value, const std::string& name = "w",
                              int64_t step = 0) {
    OutgoingMessage m;
    m.type = wire::MessageType::PushRequest;
    m.step = step;
    Tensor g(DType::kFloat32, std::move(shape));
    for (int64_t i = 0; i < g.num_elements(); ++i) g.f32()[i] = value;
    m.tensors.push_back({name, 0, g});
    return m;
  }
  static OutgoingMessage Pull(const std::string& name) {
    OutgoingMessage m;
    m.type = wire::MessageType::PullRequest;
    m.names = {name};
    return m;
  }
  std::vector<float> Value() {
    auto reply = shards_.Connect(0, kCluster)->Call(Pull("w"));
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    if (!reply.ok()) return {};
    const TensorView& v = reply->tensors()[0];
    return std::vector<float>(v.f32(), v.f32() + v.num_elements());
  }

  InProcessShards shards_{1};
  std::unique_ptr<Placement> placement_;
};

TEST_F(PsServiceTest, PullReturnsTheValueAndPushAppliesTheGradient) {
  Init();
  EXPECT_EQ(Value(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto reply = shards_.Connect(0, kCluster)->Call(Push({2, 3}, 0.5f));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->type(), wire::MessageType::PushReply);
  EXPECT_EQ(Value(), (std::vector<float>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}));
}

// PushParams.pull_back: the reply carries the values right after the push,
// in the dtype asked for; a dtype no pull may ask for is refused before
// anything is applied.
TEST_F(PsServiceTest, APushThatPullsBackIsAnsweredWithTheValuesItMade) {
  Init();
  OutgoingMessage push = Push({2, 3}, 0.5f);
  push.extras = [](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.push = wire::CreatePushParams(fbb, /*increment_global_step=*/false, 0, 0, 0, 0,
                                         /*pull_back=*/true);
    return extras;
  };
  auto reply = shards_.Connect(0, kCluster)->Call(push);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_NE(reply->header().push_result(), nullptr);
  EXPECT_EQ(reply->header().push_result()->applied(), 1u);
  ASSERT_EQ(reply->tensors().size(), 1u);
  const TensorView& w = reply->tensors()[0];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.version, 1);
  EXPECT_EQ(std::vector<float>(w.f32(), w.f32() + 6),
            (std::vector<float>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}));
  push.pull_dtype = DType::kInt64;
  auto refused = shards_.Connect(0, kCluster)->Call(push);
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
  EXPECT_EQ(Value(), (std::vector<float>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}));
}

TEST_F(PsServiceTest, BadShapeIsRefusedAndTheValueUnchanged) {
  Init();
  auto reply = shards_.Connect(0, kCluster)->Call(Push({3, 2}, 0.5f));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), Code::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("ps:0: gradient for 'w' has shape"), std::string::npos)
      << reply.status().ToString();
  EXPECT_EQ(Value(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(PsServiceTest, UnknownVariableIsNotFound) {
  Init();
  auto pull = shards_.Connect(0, kCluster)->Call(Pull("nope"));
  EXPECT_EQ(pull.status().code(), Code::kNotFound) << pull.status().ToString();
  auto push = shards_.Connect(0, kCluster)->Call(Push({2, 3}, 1, "nope"));
  EXPECT_EQ(push.status().code(), Code::kNotFound) << push.status().ToString();
  EXPECT_EQ(Value(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// The shard adopts the chief's cluster id at init; another cluster's
// messages are refused before the service sees them.
TEST_F(PsServiceTest, WrongClusterIdIsRefused) {
  Init();
  auto reply = shards_.Connect(0, kCluster + 1)->Call(Push({2, 3}, 0.5f));
  EXPECT_EQ(reply.status().code(), Code::kPermissionDenied) << reply.status().ToString();
  EXPECT_EQ(Value(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(PsServiceTest, ServesNothingElse) {
  Init();
  OutgoingMessage token;
  token.type = wire::MessageType::TokenRequest;
  auto reply = shards_.Connect(0, kCluster)->Call(token);
  EXPECT_EQ(reply.status().code(), Code::kInvalidArgument) << reply.status().ToString();
}

// What a ps serves on its I/O thread: pulls, status, async pushes and
// shipments up to kQuickPushBytes; never a sync push (it may notify the
// chief), a larger push or shipment, nor init, save, restore, shutdown.
TEST_F(PsServiceTest, QuickRequestsArePullsStatusAndSmallAsyncPushesAndShipments) {
  const auto quick = [this](const OutgoingMessage& m) {
    auto request = DecodeMessage(EncodeMessage(m, {1, kCluster, wire::Role::Worker, 0}), 1 << 30);
    EXPECT_TRUE(request.ok()) << request.status().ToString();
    return request.ok() && shards_.service(0).Quick(*request);
  };
  OutgoingMessage other;
  Init(TrainingMode::kAsync);
  EXPECT_TRUE(quick(Pull("w")));
  EXPECT_TRUE(quick(Push({2, 3}, 0.5f)));
  EXPECT_FALSE(quick(Push({static_cast<int64_t>(PsService::kQuickPushBytes / 4)}, 0.5f)));
  other.type = wire::MessageType::ShardStatusRequest;
  EXPECT_TRUE(quick(other));
  const auto shipment = [](int64_t floats) {
    return ShipRequestOf(0, 1, ShardState{{{"w", Tensor(DType::kFloat32, {floats})}}, {}});
  };
  EXPECT_TRUE(quick(shipment(3)));
  EXPECT_FALSE(quick(shipment(static_cast<int64_t>(PsService::kQuickPushBytes / 4))));
  for (auto type : {wire::MessageType::InitRequest, wire::MessageType::SaveRequest,
                    wire::MessageType::RestoreRequest, wire::MessageType::LrLoweringsRequest,
                    wire::MessageType::ShutdownRequest}) {
    other.type = type;
    EXPECT_FALSE(quick(other)) << wire::EnumNameMessageType(type);
  }
  Init(TrainingMode::kSync, /*replicas=*/2);
  EXPECT_FALSE(quick(Push({2, 3}, 0.5f)));
  EXPECT_TRUE(quick(Pull("w")));
}

// DESIGN section 7 on the shard: with N = 2, the step is applied once two
// workers pushed; a second push of one worker is a duplicate; a push for an
// old step is stale. The value moves once, by the average.
TEST_F(PsServiceTest, SyncStepAppliesTheAverageOnceDroppingStaleAndDuplicates) {
  Init(TrainingMode::kSync, /*replicas=*/2);
  auto w0 = shards_.Client(*placement_, kCluster, wire::Role::Worker, 0);
  auto w1 = shards_.Client(*placement_, kCluster, wire::Role::Worker, 1);
  auto w2 = shards_.Client(*placement_, kCluster, wire::Role::Worker, 2);
  const auto grad = [](float v) {
    Tensor g(DType::kFloat32, {2, 3});
    for (int i = 0; i < 6; ++i) g.f32()[i] = v;
    return std::vector<Tensor>{g};
  };
  auto first = w0->SyncPush({1}, grad(1), 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = w0->SyncPush({1}, grad(100), 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->duplicate_shards, 1u);
  EXPECT_EQ(Value(), (std::vector<float>{1, 2, 3, 4, 5, 6}));  // one gradient: not yet
  ASSERT_TRUE(w1->SyncPush({1}, grad(3), 0).ok());
  EXPECT_EQ(Value(), (std::vector<float>{-1, 0, 1, 2, 3, 4}));  // minus the mean, 2
  auto late = w2->SyncPush({1}, grad(100), 0);                  // the spare's push of step 0
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->stale_shards, 1u);
  EXPECT_EQ(Value(), (std::vector<float>{-1, 0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace pst
