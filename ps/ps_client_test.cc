// PsClient's split and reassembly of partitioned variables, over two
// in-process shards. No processes, no sleeps.
#include "ps/ps_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <thread>

#include "common/testing/gate.h"
#include "model/layers/initializer.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"
#include "transport/server.h"
#include "transport/zmq_transport.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 5;

class PsClientTest : public ::testing::Test {
 protected:
  // Variable 1 (0 is the global step): "w" [6,4] float32 = 0..23, in slices of 2 rows (32 bytes)
  // over two shards; "b" [4] whole.
  void SetUp() override {
    PlacementOptions options;
    options.num_shards = 2;
    options.partition_bytes = 32;
    auto placement = Placement::Compute(
        WithGlobalStep({{"w", DType::kFloat32, {6, 4}}, {"b", DType::kFloat32, {4}}}), options);
    ASSERT_TRUE(placement.ok()) << placement.status().ToString();
    placement_ = std::make_unique<Placement>(*placement);
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    ASSERT_TRUE(Initialize(config).ok());
    client_ = shards_.Client(*placement_, kCluster);
  }
  // The chief's init of both shards with `config`, w = 0..23.
  Status Initialize(ShardConfig config) {
    std::vector<Tensor> values;
    for (const VariableSpec& spec : placement_->variables()) {
      values.push_back(InitializeVariable(spec, 1));
    }
    for (int i = 0; i < 24; ++i) values[1].f32()[i] = static_cast<float>(i);
    config.global_step_variable = kGlobalStepName;
    return ShardAdmin(&*shards_.Client(*placement_, kCluster, wire::Role::Chief))
        .Initialize(config, values);
  }
  std::vector<float> PullW() {
    std::vector<Tensor> values;
    EXPECT_TRUE(client_->Pull({1}, &values).ok());
    return std::vector<float>(values[0].f32(), values[0].f32() + values[0].num_elements());
  }

  InProcessShards shards_{2};
  std::unique_ptr<Placement> placement_;
  std::unique_ptr<PsClient> client_;
};

TEST_F(PsClientTest, TheVariableIsSplitOverBothShards) {
  ASSERT_EQ(placement_->SlicesOfVariable(1).size(), 3u);
  EXPECT_FALSE(placement_->SlicesOnShard(0).empty());
  EXPECT_FALSE(placement_->SlicesOnShard(1).empty());
  std::set<int> shards;
  for (int s : placement_->SlicesOfVariable(1)) shards.insert(placement_->slices()[s].shard);
  EXPECT_EQ(shards.size(), 2u);
}

TEST_F(PsClientTest, PullReassemblesTheSlicesInRowOrder) {
  std::vector<float> expected(24);
  for (int i = 0; i < 24; ++i) expected[i] = static_cast<float>(i);
  EXPECT_EQ(PullW(), expected);
}

TEST_F(PsClientTest, PushSplitsTheGradientRowByRow) {
  ASSERT_EQ(PullW().size(), 24u);  // versions for the push
  Tensor grad(DType::kFloat32, {6, 4});
  for (int i = 0; i < 24; ++i) grad.f32()[i] = static_cast<float>(i % 4 == 0 ? i : 0);
  auto summary = client_->Push({1}, {grad}, /*increment_global_step=*/true);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->applied, 3u);  // one per slice
  std::vector<float> expected(24);
  for (int i = 0; i < 24; ++i) expected[i] = i % 4 == 0 ? 0.0f : static_cast<float>(i);
  EXPECT_EQ(PullW(), expected);
  auto step = client_->GlobalStep();
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(*step, 1);
}

// Same element count, other shape: the row split would hand every shard a
// slice that looks right, so the client must refuse it whole.
TEST_F(PsClientTest, PushRefusesAGradientOfAnotherShapeAndChangesNothing) {
  const std::vector<float> before = PullW();
  auto transposed = client_->Push({1}, {Tensor(DType::kFloat32, {4, 6})}, true);
  ASSERT_FALSE(transposed.ok());
  EXPECT_EQ(transposed.status().code(), Code::kInvalidArgument);
  EXPECT_NE(
      transposed.status().message().find("'w' is float32 [4,6]; the variable is float32 [6,4]"),
      std::string::npos)
      << transposed.status().message();
  EXPECT_FALSE(
      client_->Push({1}, {Tensor(DType::kFloat32, {6, 4}), Tensor(DType::kFloat32, {4})}, true)
          .ok());
  std::vector<Tensor> values;
  EXPECT_EQ(client_->PushThenPull({1}, {Tensor(DType::kFloat32, {4, 6})}, true, {1}, &values)
                .status()
                .code(),
            Code::kInvalidArgument);
  EXPECT_EQ(client_->SyncPush({1}, {Tensor(DType::kFloat32, {4, 6})}, 0).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(PullW(), before);
  auto step = client_->GlobalStep();
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(*step, 0);
}

// Every schedule field and the weight decay reach both shards: with zero
// gradients only the decay moves w, by 1 - rate * 0.5 at each step's rate:
// 0.5 (warm-up, 1/2 of 1), 0.5 (decayed once), 0.4 (0.25 floored).
TEST_F(PsClientTest, TheScheduleAndWeightDecayCrossTheWire) {
  ShardConfig config;
  config.optimizer.learning_rate = 1.0f;
  config.lr_schedule = "step";
  config.lr_decay_steps = 1;
  config.lr_decay_rate = 0.5f;
  config.lr_min = 0.4f;
  config.lr_warmup_steps = 2;
  config.weight_decay = 0.5f;
  ASSERT_TRUE(Initialize(config).ok());
  for (int step = 0; step < 3; ++step) {
    ASSERT_EQ(PullW().size(), 24u);  // versions for the push
    ASSERT_TRUE(client_->Push({1}, {Tensor(DType::kFloat32, {6, 4})}, true).ok());
  }
  const std::vector<float> w = PullW();
  for (int i = 0; i < 24; ++i) EXPECT_FLOAT_EQ(w[i], i * 0.75f * 0.75f * 0.8f) << i;
}

// --lr_schedule=plateau: the chief's k reaches both shards, and their next
// updates run at 1 * 0.5^k on every slice of w. A negative k is refused by
// the first shard, named, and leaves k as it was.
TEST_F(PsClientTest, TheLearningRatesLoweringsReachEveryShard) {
  ShardConfig config;
  config.optimizer.learning_rate = 1.0f;
  config.lr_schedule = "plateau";
  config.lr_decay_rate = 0.5f;
  ASSERT_TRUE(Initialize(config).ok());
  auto chief = shards_.Client(*placement_, kCluster, wire::Role::Chief);
  const auto deadline = [] { return SteadyClock().Now() + std::chrono::seconds(2); };
  ASSERT_TRUE(ShardAdmin(&*chief).SetLrLowerings(1, deadline()).ok());
  const Status negative = ShardAdmin(&*chief).SetLrLowerings(-1, deadline());
  EXPECT_EQ(negative.code(), Code::kInvalidArgument);
  EXPECT_EQ(negative.message().rfind("ps:0: ", 0), 0u) << negative.ToString();
  for (int k = 0; k < 2; ++k) {
    StatusOr<ShardStatus> status = ShardAdmin(&*chief).GetShardStatus(k, deadline());
    ASSERT_TRUE(status.ok()) << status.status().ToString();
    EXPECT_EQ(status->store.lr_lowerings, 1) << "ps:" << k;
  }
  Tensor ones(DType::kFloat32, {6, 4});
  for (int i = 0; i < 24; ++i) ones.f32()[i] = 1.0f;
  ASSERT_EQ(PullW().size(), 24u);  // versions for the push
  ASSERT_TRUE(client_->Push({1}, {ones}, true).ok());
  const std::vector<float> w = PullW();
  for (int i = 0; i < 24; ++i) EXPECT_FLOAT_EQ(w[i], i - 0.5f) << i;
}

// The push and the next pull sent back to back: the shards (in order here)
// answer the pull with the push applied, the summary is the push's, and the
// next push carries the versions of that pull (no staleness).
TEST_F(PsClientTest, PushThenPullReturnsThePushSummaryAndTheValuesAfterIt) {
  ASSERT_EQ(PullW().size(), 24u);  // versions for the push
  Tensor grad(DType::kFloat32, {6, 4});
  for (int i = 0; i < 24; ++i) grad.f32()[i] = 1.0f;
  std::vector<Tensor> values;
  auto summary =
      client_->PushThenPull({1}, {grad}, /*increment_global_step=*/true, {1, 2}, &values);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->applied, 3u);
  EXPECT_EQ(summary->global_step, 1);
  ASSERT_EQ(values.size(), 2u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(values[0].f32()[i], i - 1.0f) << i;
  EXPECT_EQ(values[1].shape(), (Shape{4}));
  auto again = client_->Push({1}, {grad}, /*increment_global_step=*/false);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->max_staleness, 0);
}

// Pull, Push and PushThenPull reuse their rounds from call to call: what a
// call leaves there must reach neither the caller's buffers nor the next
// call's requests.
TEST_F(PsClientTest, AReusedRoundKeepsNoGradientAndCarriesNothingToTheNextCall) {
  std::vector<Tensor> values;
  ASSERT_TRUE(client_->Pull({1, 2}, &values).ok());
  const std::vector<float> b(values[1].f32(), values[1].f32() + 4);
  Tensor grad(DType::kFloat32, {4});  // "b", pushed whole (zero-copy)
  for (int i = 0; i < 4; ++i) grad.f32()[i] = 1.0f;
  auto stepped = client_->Push({2}, {grad}, /*increment_global_step=*/true);
  ASSERT_TRUE(stepped.ok()) << stepped.status().ToString();
  EXPECT_EQ(grad.buffer().use_count(), 1) << "the push's request still holds the gradient";
  auto plain = client_->PushThenPull({2}, {grad}, /*increment_global_step=*/false, {2}, &values);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(grad.buffer().use_count(), 1);
  auto step = client_->GlobalStep();
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(*step, 1) << "the second push carried the first one's step increment";
  ASSERT_EQ(values.size(), 1u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(values[0].f32()[i], b[i] - 2.0f) << i;  // lr 1
}

// --overlap: the same requests, the push's summary collected afterwards.
TEST_F(PsClientTest, FinishPushCollectsThePushThatStartPushThenPullLeftInFlight) {
  ASSERT_EQ(PullW().size(), 24u);  // versions for the push
  Tensor grad(DType::kFloat32, {6, 4});
  for (int i = 0; i < 24; ++i) grad.f32()[i] = 1.0f;
  std::vector<Tensor> values;
  ASSERT_TRUE(client_->StartPushThenPull({1}, {grad}, true, {1}, &values).ok());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(values[0].f32()[i], i - 1.0f) << i;
  // Another call now would drain the push's replies: refused.
  EXPECT_EQ(client_->Pull({1}, &values).code(), Code::kFailedPrecondition);
  EXPECT_EQ(client_->StartPushThenPull({1}, {grad}, true, {1}, &values).code(),
            Code::kFailedPrecondition);
  auto acked = client_->FinishPush();
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  ASSERT_TRUE(acked->has_value());
  EXPECT_EQ((*acked)->applied, 3u);
  EXPECT_EQ((*acked)->global_step, 1);
  auto none = client_->FinishPush();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(PullW()[0], -1.0f);  // applied once
}

// Wait-free backprop: a push sent in parts (w, then b with the global
// step), the pull behind them reads both, and FinishPush sums the parts.
TEST_F(PsClientTest, APushSentInPartsIsOnePushWithThePullBehindIt) {
  ASSERT_EQ(PullW().size(), 24u);  // versions for the push
  Tensor w_grad(DType::kFloat32, {6, 4}), b_grad(DType::kFloat32, {4});
  for (int i = 0; i < 24; ++i) w_grad.f32()[i] = 1.0f;
  for (int i = 0; i < 4; ++i) b_grad.f32()[i] = 2.0f;
  std::vector<Tensor> values;
  EXPECT_EQ(client_->PullBehindPush({1, 2}, &values).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(client_->SendPushPart({1}, {w_grad}, /*increment_global_step=*/false).ok());
  EXPECT_EQ(client_->Pull({1}, &values).code(), Code::kFailedPrecondition);  // in flight
  ASSERT_TRUE(client_->SendPushPart({2}, {b_grad}, /*increment_global_step=*/true).ok());
  ASSERT_TRUE(client_->PullBehindPush({1, 2}, &values).ok());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(values[0].f32()[i], i - 1.0f) << i;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(values[1].f32()[i], -2.0f) << i;  // b starts at 0
  // The pull closed the push: another part is the next step's.
  EXPECT_EQ(client_->SendPushPart({2}, {b_grad}, false).code(), Code::kFailedPrecondition);
  auto acked = client_->FinishPush();
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  ASSERT_TRUE(acked->has_value());
  EXPECT_EQ((*acked)->applied, 4u);  // w's three slices and b
  EXPECT_EQ((*acked)->global_step, 1);
  EXPECT_EQ(PullW()[0], -1.0f);  // applied once
}

// A pull sent behind each part reads that part, and the pulls are taken
// together, in the order the caller asks for.
TEST_F(PsClientTest, APullBehindEachPartReadsItsPart) {
  ASSERT_EQ(PullW().size(), 24u);
  Tensor w_grad(DType::kFloat32, {6, 4}), b_grad(DType::kFloat32, {4});
  for (int i = 0; i < 24; ++i) w_grad.f32()[i] = 1.0f;
  for (int i = 0; i < 4; ++i) b_grad.f32()[i] = 2.0f;
  ASSERT_TRUE(client_->SendPushPart({2}, {b_grad}, false).ok());
  ASSERT_TRUE(client_->SendPullBehindPush({2}).ok());
  ASSERT_TRUE(client_->SendPushPart({1}, {w_grad}, true).ok());
  ASSERT_TRUE(client_->SendPullBehindPush({1}).ok());
  std::vector<Tensor> values;
  EXPECT_EQ(client_->TakePullsBehindPush({1, 0}, &values).code(), Code::kInvalidArgument)
      << "the global step was not pulled";
  // That abandoned the push: a new one, the same way.
  ASSERT_TRUE(client_->SendPushPart({2}, {b_grad}, false).ok());
  ASSERT_TRUE(client_->SendPullBehindPush({2}).ok());
  ASSERT_TRUE(client_->SendPushPart({1}, {w_grad}, true).ok());
  ASSERT_TRUE(client_->SendPullBehindPush({1}).ok());
  ASSERT_TRUE(client_->TakePullsBehindPush({1, 2}, &values).ok());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(values[0].f32()[i], i - 2.0f) << i;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(values[1].f32()[i], -4.0f) << i;
  auto acked = client_->FinishPush();
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  EXPECT_EQ((*acked)->global_step, 2);
}

// Unreplicated, a part's pull rides in the part itself: each shard answers
// the push with its slices' values after applying it. The values and the
// push's results are those of a part with a pull sent behind it, with one
// request fewer per shard.
TEST_F(PsClientTest, APullCarriedByItsPartReadsItWithoutARequestOfItsOwn) {
  ASSERT_EQ(PullW().size(), 24u);
  Tensor w_grad(DType::kFloat32, {6, 4}), b_grad(DType::kFloat32, {4});
  for (int i = 0; i < 24; ++i) w_grad.f32()[i] = 1.0f;
  for (int i = 0; i < 4; ++i) b_grad.f32()[i] = 2.0f;
  const auto bytes_in = [this] {
    return shards_.server(0).bytes_in() + shards_.server(1).bytes_in();
  };
  uint64_t before = bytes_in();
  ASSERT_TRUE(client_->SendPushPart({2}, {b_grad}, false).ok());
  ASSERT_TRUE(client_->SendPullBehindPush({2}).ok());
  ASSERT_TRUE(client_->SendPushPart({1}, {w_grad}, true).ok());
  ASSERT_TRUE(client_->SendPullBehindPush({1}).ok());
  std::vector<Tensor> values;
  ASSERT_TRUE(client_->TakePullsBehindPush({1, 2}, &values).ok());
  ASSERT_TRUE(client_->FinishPush().ok());
  const uint64_t pulled_behind = bytes_in() - before;
  before = bytes_in();
  ASSERT_TRUE(client_->SendPushPartAndPull({2}, {b_grad}, false).ok());
  ASSERT_TRUE(client_->SendPushPartAndPull({1}, {w_grad}, true).ok());
  ASSERT_TRUE(client_->TakePullsBehindPush({1, 2}, &values).ok());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(values[0].f32()[i], i - 2.0f) << i;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(values[1].f32()[i], -4.0f) << i;
  auto acked = client_->FinishPush();
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  ASSERT_TRUE(acked->has_value());
  EXPECT_EQ((*acked)->global_step, 2);
  EXPECT_EQ((*acked)->applied, 4u);  // w's three slices and b
  // The same gradients and versions: only the pull requests are missing.
  EXPECT_LT(bytes_in() - before, pulled_behind);
  EXPECT_EQ(PullW()[0], -2.0f);
}

// On a bfloat16 wire the values are widened into buffers of their own,
// which the next steps' pulls behind parts reuse: each step reads its own.
// The same when the parts carry the pulls: the shards narrow the values
// they send back as they would a pull's.
TEST_F(PsClientTest, PullsBehindOrCarriedByPartsWidenEveryStepsValues) {
  Tensor w_grad(DType::kFloat32, {6, 4}), b_grad(DType::kFloat32, {4});
  for (int i = 0; i < 24; ++i) w_grad.f32()[i] = 1.0f;
  for (int i = 0; i < 4; ++i) b_grad.f32()[i] = 0.5f;
  int step = 0;  // both ways push to the same shards, one after the other
  for (const bool carried : {false, true}) {
    SCOPED_TRACE(carried ? "carried by the parts" : "pulled behind the parts");
    std::unique_ptr<PsClient> client =
        shards_.Client(*placement_, kCluster, wire::Role::Worker, 0, "", DType::kBFloat16);
    const auto send = [&](int variable, const Tensor& grad, bool increment) {
      if (carried) return client->SendPushPartAndPull({variable}, {grad}, increment);
      const Status sent = client->SendPushPart({variable}, {grad}, increment);
      return sent.ok() ? client->SendPullBehindPush({variable}) : sent;
    };
    std::vector<Tensor> values;
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(++step);
      ASSERT_TRUE(send(2, b_grad, false).ok());
      ASSERT_TRUE(send(1, w_grad, true).ok());
      ASSERT_TRUE(client->TakePullsBehindPush({1, 2}, &values).ok());
      ASSERT_TRUE(client->FinishPush().ok());
      for (int k = 0; k < 24; ++k) {  // small integers: exact in bfloat16
        EXPECT_EQ(values[0].f32()[k], static_cast<float>(k - step)) << k;
      }
      for (int k = 0; k < 4; ++k) EXPECT_EQ(values[1].f32()[k], -0.5f * step) << k;
    }
  }
}

// A misshapen part is refused before it is sent: the parts in flight stay.
TEST_F(PsClientTest, AMisshapenPartIsRefusedAndThePushGoesOn) {
  Tensor w_grad(DType::kFloat32, {6, 4});
  ASSERT_TRUE(client_->SendPushPart({1}, {w_grad}, false).ok());
  const Tensor wrong(DType::kFloat32, {3});
  EXPECT_EQ(client_->SendPushPart({2}, {wrong}, true).code(), Code::kInvalidArgument);
  std::vector<Tensor> values;
  EXPECT_TRUE(client_->PullBehindPush({1}, &values).ok());
  ASSERT_TRUE(client_->FinishPush().ok());
  EXPECT_EQ(PullW().size(), 24u);
}

// A part checked as it is built: a NaN (or, on a bfloat16 wire, a finite
// value that narrows to infinity) sends nothing and names the variable.
TEST_F(PsClientTest, ACheckedPartWithANonFiniteGradientSendsNothing) {
  for (const DType wire : {DType::kFloat32, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(wire));
    std::unique_ptr<PsClient> client =
        shards_.Client(*placement_, kCluster, wire::Role::Worker, 0, "", wire);
    Tensor w_grad(DType::kFloat32, {6, 4}), b_grad(DType::kFloat32, {4});
    w_grad.f32()[0] = 1.0f;
    for (const float bad : {std::nanf(""), std::numeric_limits<float>::max()}) {
      b_grad.f32()[2] = bad;
      const std::vector<float> before = PullW();
      std::optional<size_t> not_finite;
      ASSERT_TRUE(client->SendPushPart({1, 2}, {w_grad, b_grad}, true, &not_finite).ok());
      if (wire == DType::kFloat32 && !std::isnan(bad)) {  // finite in float32: sent
        EXPECT_FALSE(not_finite.has_value());
        ASSERT_TRUE(client->FinishPush().ok());
        continue;
      }
      EXPECT_EQ(not_finite, std::optional<size_t>(1)) << bad;
      EXPECT_EQ(PullW(), before);  // w, the finite one, was not sent either
      std::vector<Tensor> values;
      EXPECT_TRUE(client->Pull({1}, &values).ok());  // nothing in flight
    }
    b_grad.f32()[2] = 0;
    std::optional<size_t> not_finite;
    ASSERT_TRUE(client->SendPushPart({1, 2}, {w_grad, b_grad}, true, &not_finite).ok());
    EXPECT_FALSE(not_finite.has_value());
    ASSERT_TRUE(client->FinishPush().ok());
  }
}

TEST_F(PsClientTest, PushThenPullReportsARefusedPush) {
  Tensor grad(DType::kFloat32, {6, 4});
  grad.f32()[5] = std::nanf("");
  std::vector<Tensor> values;
  auto summary = client_->PushThenPull({1}, {grad}, /*increment_global_step=*/true, {1}, &values);
  EXPECT_EQ(summary.status().code(), Code::kInvalidArgument) << summary.status().ToString();
}

// A shard over ZeroMQ (2 handler threads, nothing served inline) holding
// "b" [4], answered as `handler` says, and a client of it.
class ScriptedShard {
 public:
  explicit ScriptedShard(Server::Handler handler)
      : server_(context_, Options(), std::move(handler)) {}
  Status Start() { return server_.Start(); }
  std::unique_ptr<PsClient> Client(const std::atomic<bool>* interrupt = nullptr) {
    const std::string& endpoint = server_.bound_endpoint();  // tcp://127.0.0.1:N
    ClusterSpec cluster;
    cluster.ps.push_back(*ParseHostPort("ps", endpoint.substr(endpoint.find("//") + 2)));
    ClientIdentity identity;
    identity.rpc_timeout_ms = 5000;
    identity.interrupt = interrupt;
    return std::make_unique<PsClient>(
        transport_, cluster,
        Placement::Compute({{"b", DType::kFloat32, {4}}}, PlacementOptions{1}).value(), identity);
  }

 private:
  static ServerOptions Options() {
    ServerOptions options;
    options.name = "ps:0";
    options.endpoint = "tcp://127.0.0.1:*";
    options.num_threads = 2;
    return options;
  }

  zmq::context_t context_{1};
  RpcServer server_;
  ZmqTransport transport_{context_};
};

OutgoingMessage PushReplyAt(int64_t global_step) {
  OutgoingMessage reply;
  reply.type = wire::MessageType::PushReply;
  reply.extras = [global_step](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.push_result = wire::CreatePushResult(fbb, /*applied=*/1, 0, 0, 0, global_step);
    return extras;
  };
  return reply;
}

OutgoingMessage PullReplyOfB() {
  OutgoingMessage reply;
  reply.type = wire::MessageType::PullReply;
  reply.tensors.push_back({"b", 1, Tensor(DType::kFloat32, {4})});
  return reply;
}

// A shard that answers a push only once the pull has arrived: PushThenPull
// does not wait for the push's reply before it sends the pull.
TEST(PsClientOverZmqTest, PushThenPullSendsThePullBeforeThePushIsAnswered) {
  Gate pulled;
  ScriptedShard shard([&pulled](const ReceivedMessage& request, RequestContext&) {
    if (request.type() == wire::MessageType::PushRequest) {
      pulled.Pass();
      return PushReplyAt(-1);
    }
    pulled.Open();
    return PullReplyOfB();
  });
  OpenOnExit open_on_exit{pulled};
  ASSERT_TRUE(shard.Start().ok());
  std::unique_ptr<PsClient> client = shard.Client();
  std::vector<Tensor> values;
  auto summary = client->PushThenPull({0}, {Tensor(DType::kFloat32, {4})}, false, {0}, &values);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->applied, 1u);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].shape(), (Shape{4}));
}

// A shard that answers a push only once the test lets it: StartPushThenPull
// returns with the pull's values while the push waits (under --ps_replicas,
// for its backups), and FinishPush collects it.
TEST(PsClientOverZmqTest, StartPushThenPullReturnsBeforeThePushIsAnswered) {
  Gate acknowledge;
  ScriptedShard shard([&acknowledge](const ReceivedMessage& request, RequestContext&) {
    if (request.type() == wire::MessageType::PushRequest) {
      acknowledge.Pass();
      return PushReplyAt(7);
    }
    return PullReplyOfB();
  });
  OpenOnExit open_on_exit{acknowledge};
  ASSERT_TRUE(shard.Start().ok());
  std::unique_ptr<PsClient> client = shard.Client();
  std::vector<Tensor> values;
  ASSERT_TRUE(
      client->StartPushThenPull({0}, {Tensor(DType::kFloat32, {4})}, false, {0}, &values).ok());
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].shape(), (Shape{4}));
  acknowledge.Open();
  auto acked = client->FinishPush();
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  ASSERT_TRUE(acked->has_value());
  EXPECT_EQ((*acked)->global_step, 7);
}

// A signal arriving while pushes wait for their replies: an async push's
// wait ends at once, a sync push's waits for the reply (a worker leaving
// mid-push must not leave its step on some shards only).
TEST(PsClientOverZmqTest, ASignalCutsAnAsyncPushShortButNotASyncOne) {
  std::atomic<bool> interrupt{false};
  std::atomic<int> requests{0};
  Gate async_reply, sync_reply;
  ScriptedShard shard([&](const ReceivedMessage&, RequestContext&) {
    const int n = requests++;
    interrupt.store(true);  // the signal, while the push is on the shard
    (n == 0 ? async_reply : sync_reply).Pass();
    return PushReplyAt(3);
  });
  OpenOnExit open_async{async_reply}, open_sync{sync_reply};
  ASSERT_TRUE(shard.Start().ok());
  std::unique_ptr<PsClient> client = shard.Client(&interrupt);
  const Tensor grad(DType::kFloat32, {4});
  const StatusOr<PushSummary> async = client->Push({0}, {grad}, false);
  EXPECT_EQ(async.status().code(), Code::kAborted) << async.status().ToString();
  async_reply.Open();  // its late reply is dropped
  interrupt.store(false);
  std::thread answer([&sync_reply] {
    // The reply goes once the client has had ample time to give up.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sync_reply.Open();
  });
  const StatusOr<PushSummary> sync = client->SyncPush({0}, {grad}, /*step=*/0);
  answer.join();
  ASSERT_TRUE(sync.ok()) << sync.status().ToString();
  EXPECT_EQ(sync->applied, 1u);
}

}  // namespace
}  // namespace pst
