// ChiefService's answers to the workers and the ps, over an in-process
// transport, with its real collaborators (ChiefState, SyncCoordinator): no
// sockets, no processes, no sleeps.
#include "chief/chief_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "chief/chief_state.h"
#include "chief/sync/sync_coordinator.h"
#include "common/clock.h"
#include "transport/frames.h"
#include "transport/in_process.h"
#include "transport/message_types.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 7;
constexpr uint64_t kPlacementHash = 1234;
constexpr int64_t kTrainSteps = 100;
constexpr int kWorkers = 2;
constexpr int kPs = 1;
const char kJob[] = "dataset=csv input=4 features classes=3 model=mlp";
const char kChiefEndpoint[] = "tcp://127.0.0.1:1999";

OutgoingMessage Join(uint64_t placement_hash = kPlacementHash, const std::string& job = kJob) {
  OutgoingMessage request;
  request.type = wire::MessageType::JoinRequest;
  request.extras = [placement_hash, job](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, placement_hash, wire::ClusterState::Starting, 0,
                                       fbb.CreateString(job));
    return extras;
  };
  return request;
}

OutgoingMessage Report(float loss, int64_t examples, bool done) {
  OutgoingMessage request;
  request.type = wire::MessageType::ReportRequest;
  request.extras = [loss, examples, done](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.report = wire::CreateReport(fbb, loss, examples, /*epoch=*/0, /*batch=*/0,
                                       /*batches_per_epoch=*/10, /*step_time_ms=*/5, done);
    return extras;
  };
  return request;
}

OutgoingMessage Message(wire::MessageType type, int64_t step = 0) {
  OutgoingMessage request;
  request.type = type;
  request.step = step;
  return request;
}

wire::ClusterState StateIn(const ReceivedMessage& reply) { return reply.header().join()->state(); }

class ChiefServiceTest : public ::testing::Test {
 protected:
  // `sync`: serve tokens and step notices (--mode=sync, one gradient a step).
  void Serve(bool sync) {
    ServerOptions options;
    options.name = "chief";
    options.endpoint = kChiefEndpoint;
    options.role = wire::Role::Chief;
    options.cluster_id = kCluster;
    server_ = transport_.Listen(options, [this](const ReceivedMessage& r, RequestContext& c) {
      return service_->Handle(r, c);
    });
    if (sync) {
      SyncQuorum quorum;
      quorum.fixed = 1;
      sync_ = std::make_unique<SyncCoordinator>(std::vector<int>{0}, kWorkers, kTrainSteps,
                                                server_.get(), quorum);
    }
    service_ = std::make_unique<ChiefService>(&state_, sync_.get(), kWorkers, kPs);
    ASSERT_TRUE(server_->Start().ok());
  }

  std::unique_ptr<Connection> Connect(wire::Role role, int index) {
    ChannelOptions options;
    options.peer_name = "chief";
    options.endpoint = kChiefEndpoint;
    options.cluster_id = kCluster;
    options.role = role;
    options.index = index;
    options.rpc_timeout_ms = 2000;
    return transport_.Connect(options);
  }

  FakeClock clock_;
  ChiefState state_{kPlacementHash, kTrainSteps, kWorkers, kPs, kJob, clock_};
  InProcessTransport transport_;
  std::unique_ptr<SyncCoordinator> sync_;
  std::unique_ptr<ChiefService> service_;
  std::unique_ptr<Server> server_;  // after service_: stopped first
};

TEST_F(ChiefServiceTest, AWorkerWaitsUntilTrainingOpensThenJoins) {
  Serve(/*sync=*/false);
  std::unique_ptr<Connection> worker = Connect(wire::Role::Worker, 1);

  StatusOr<ReceivedMessage> early = worker->Call(Join());
  ASSERT_TRUE(early.ok()) << early.status().ToString();
  EXPECT_EQ(StateIn(*early), wire::ClusterState::Starting);
  EXPECT_EQ(early->header().join()->placement_hash(), kPlacementHash);
  EXPECT_EQ(early->header().join()->train_steps(), kTrainSteps);
  EXPECT_EQ(state_.live_workers(), 0);

  state_.set_state(wire::ClusterState::Training);
  StatusOr<ReceivedMessage> joined = worker->Call(Join());
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(StateIn(*joined), wire::ClusterState::Training);
  EXPECT_EQ(state_.live_workers(), 1);

  state_.set_state(wire::ClusterState::Stopping);
  StatusOr<ReceivedMessage> late = Connect(wire::Role::Worker, 0)->Call(Join());
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ(StateIn(*late), wire::ClusterState::Stopping);
}

TEST_F(ChiefServiceTest, AWorkerOfAnotherJobOrPlacementIsRefused) {
  Serve(/*sync=*/false);
  state_.set_state(wire::ClusterState::Training);
  std::unique_ptr<Connection> worker = Connect(wire::Role::Worker, 0);

  const Status other_job = worker->Call(Join(kPlacementHash, "model=mlp_relu")).status();
  EXPECT_EQ(other_job.code(), Code::kFailedPrecondition) << other_job.ToString();
  EXPECT_NE(other_job.message().find("runs another job than the chief"), std::string::npos)
      << other_job.ToString();

  const Status other_placement = worker->Call(Join(kPlacementHash + 1)).status();
  EXPECT_EQ(other_placement.code(), Code::kFailedPrecondition) << other_placement.ToString();
  EXPECT_NE(other_placement.message().find("another variable placement"), std::string::npos)
      << other_placement.ToString();
  EXPECT_EQ(state_.live_workers(), 0);
}

TEST_F(ChiefServiceTest, OnlyTheClustersTasksAreServed) {
  Serve(/*sync=*/false);
  const Status stranger = Connect(wire::Role::Worker, kWorkers)->Call(Join()).status();
  EXPECT_EQ(stranger.code(), Code::kInvalidArgument) << stranger.ToString();
  const Status ps_joining = Connect(wire::Role::Ps, 0)->Call(Join()).status();
  EXPECT_EQ(ps_joining.code(), Code::kInvalidArgument) << ps_joining.ToString();
  const Status heartbeat =
      Connect(wire::Role::Ps, kPs)->Call(Message(wire::MessageType::HeartbeatRequest)).status();
  EXPECT_EQ(heartbeat.code(), Code::kInvalidArgument) << heartbeat.ToString();
  const Status pull =
      Connect(wire::Role::Worker, 0)->Call(Message(wire::MessageType::PullRequest)).status();
  EXPECT_EQ(pull.code(), Code::kInvalidArgument) << pull.ToString();
}

// Every answer, a refusal too, has the reply type of its request; a request
// type the chief does not serve gets the generic ErrorReply.
TEST_F(ChiefServiceTest, EachReplyHasItsRequestsReplyType) {
  Serve(/*sync=*/true);
  using T = wire::MessageType;
  const auto handle = [this](T type, wire::Role role, int index) {
    StatusOr<ReceivedMessage> request =
        DecodeMessage(EncodeMessage(Message(type), {1, kCluster, role, index}), 1 << 20);
    EXPECT_TRUE(request.ok()) << request.status().ToString();
    RequestContext context("peer", 1);
    return service_->Handle(*request, context);
  };
  // Refused: a join and a report without their tables, a clock in sync
  // mode, routes of unreplicated shards, a file without --follow.
  for (T type :
       {T::JoinRequest, T::ReportRequest, T::ClockRequest, T::RoutesRequest, T::FileRequest}) {
    const OutgoingMessage reply = handle(type, wire::Role::Worker, 0);
    EXPECT_EQ(reply.type, ReplyTypeOf(type)) << wire::EnumNameMessageType(type);
    EXPECT_FALSE(reply.status.ok()) << wire::EnumNameMessageType(type);
  }
  for (T type : {T::JoinRequest, T::ShardAppliedRequest}) {
    const OutgoingMessage stranger = handle(type, wire::Role::Worker, kWorkers);
    EXPECT_EQ(stranger.type, ReplyTypeOf(type)) << wire::EnumNameMessageType(type);
    EXPECT_EQ(stranger.status.code(), Code::kInvalidArgument);
  }
  const OutgoingMessage applied = handle(T::ShardAppliedRequest, wire::Role::Ps, 0);
  EXPECT_EQ(applied.type, T::ShardAppliedReply);
  EXPECT_TRUE(applied.status.ok()) << applied.status.ToString();
  const OutgoingMessage heartbeat = handle(T::HeartbeatRequest, wire::Role::Worker, 0);
  EXPECT_EQ(heartbeat.type, T::HeartbeatReply);
  EXPECT_TRUE(heartbeat.status.ok()) << heartbeat.status.ToString();
  const OutgoingMessage pull = handle(T::PullRequest, wire::Role::Worker, 0);
  EXPECT_EQ(pull.type, T::ErrorReply);
  EXPECT_EQ(pull.status.code(), Code::kInvalidArgument);
}

TEST_F(ChiefServiceTest, HeartbeatsKeepTasksAliveAndAdoptAnEarlierChiefsWorker) {
  Serve(/*sync=*/false);
  ASSERT_TRUE(Connect(wire::Role::Ps, 0)->Call(Message(wire::MessageType::HeartbeatRequest)).ok());
  EXPECT_EQ(state_.live_ps(), 1);

  // Before training opens a worker's heartbeat is only heard.
  std::unique_ptr<Connection> worker = Connect(wire::Role::Worker, 1);
  ASSERT_TRUE(worker->Call(Message(wire::MessageType::HeartbeatRequest)).ok());
  EXPECT_EQ(state_.live_workers(), 0);
  // Once it is open, a worker that never joined this chief joined the one
  // before it: adopted.
  state_.set_state(wire::ClusterState::Training);
  ASSERT_TRUE(worker->Call(Message(wire::MessageType::HeartbeatRequest)).ok());
  EXPECT_EQ(state_.live_workers(), 1);

  clock_.Advance(std::chrono::seconds(11));
  EXPECT_EQ(state_.DeclareSilentTasksDead(std::chrono::seconds(10)).size(), 2u);
  EXPECT_EQ(state_.live_ps(), 0);
  ASSERT_TRUE(Connect(wire::Role::Ps, 0)->Call(Message(wire::MessageType::HeartbeatRequest)).ok());
  EXPECT_EQ(state_.live_ps(), 1);  // heard again: alive again
}

TEST_F(ChiefServiceTest, ReportsFillTheWindowAndALastOneLetsTheWorkerLeave) {
  Serve(/*sync=*/false);
  state_.set_state(wire::ClusterState::Training);
  std::unique_ptr<Connection> worker = Connect(wire::Role::Worker, 0);
  ASSERT_TRUE(worker->Call(Join()).ok());
  ASSERT_TRUE(worker->Call(Report(0.5f, 100, /*done=*/false)).ok());
  StatusOr<ReceivedMessage> second = worker->Call(Report(1.5f, 50, /*done=*/false));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(StateIn(*second), wire::ClusterState::Training);
  EXPECT_FALSE(state_.EveryWorkerDone());

  const ReportWindow window = state_.TakeWindow();
  EXPECT_EQ(window.reports, 2);
  EXPECT_EQ(window.examples, 150);
  EXPECT_DOUBLE_EQ(window.mean_loss, 1.0);
  ASSERT_TRUE(worker->Call(Report(1.0f, 0, /*done=*/true)).ok());
  EXPECT_TRUE(state_.EveryWorkerDone());

  OutgoingMessage empty = Message(wire::MessageType::ReportRequest);
  EXPECT_EQ(worker->Call(empty).status().code(), Code::kInvalidArgument);
}

TEST_F(ChiefServiceTest, TokensAndStepNoticesExistOnlyInSyncMode) {
  Serve(/*sync=*/false);
  const Status token =
      Connect(wire::Role::Worker, 0)->Call(Message(wire::MessageType::TokenRequest, -1)).status();
  EXPECT_EQ(token.code(), Code::kFailedPrecondition) << token.ToString();
  const Status notice =
      Connect(wire::Role::Ps, 0)->Call(Message(wire::MessageType::ShardAppliedRequest, 0)).status();
  EXPECT_EQ(notice.code(), Code::kFailedPrecondition) << notice.ToString();
  const Status clock =
      Connect(wire::Role::Worker, 0)->Call(Message(wire::MessageType::ClockRequest, 0)).status();
  EXPECT_EQ(clock.code(), Code::kFailedPrecondition) << clock.ToString();
}

// Sync: a worker takes the token of the open step; asking again, it waits
// until the ps says the step is applied, then gets the next one.
TEST_F(ChiefServiceTest, ATokenPerStepTheNextOnceTheStepIsApplied) {
  Serve(/*sync=*/true);
  state_.set_state(wire::ClusterState::Training);
  sync_->Open(0);
  std::unique_ptr<Connection> worker = Connect(wire::Role::Worker, 0);
  StatusOr<ReceivedMessage> first = worker->Call(Message(wire::MessageType::TokenRequest, -1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->step(), 0);
  EXPECT_EQ(first->header().join()->replicas_to_aggregate(), 1);

  StatusOr<uint64_t> parked = worker->Send(Message(wire::MessageType::TokenRequest, 0));
  ASSERT_TRUE(parked.ok());
  EXPECT_EQ(worker->ReadOne().status().code(), Code::kUnavailable);  // no answer yet

  // A step notice from something that is not a ps moves nothing.
  EXPECT_EQ(Connect(wire::Role::Worker, 1)
                ->Call(Message(wire::MessageType::ShardAppliedRequest, 0))
                .status()
                .code(),
            Code::kInvalidArgument);
  EXPECT_EQ(sync_->global_step(), 0);

  ASSERT_TRUE(
      Connect(wire::Role::Ps, 0)->Call(Message(wire::MessageType::ShardAppliedRequest, 0)).ok());
  EXPECT_EQ(sync_->global_step(), 1);
  StatusOr<ReceivedMessage> second = worker->Receive(*parked, worker->DefaultDeadline());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->step(), 1);
  EXPECT_EQ(state_.live_workers(), 1);  // speaking once training is open, it was adopted
}

}  // namespace
}  // namespace pst
