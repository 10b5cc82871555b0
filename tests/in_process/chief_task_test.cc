// The whole chief (RunChiefOn) over an in-process transport, with a real
// PsService shard (InProcessShards) and a FakeClock: it serves its workers
// over the transport it is given, brings the shard up, follows training to
// its end. No sockets, no processes, no sleeps: the
// chief's pause moves the clock and lets a worker train one step.
#include "chief/chief_task.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/clock.h"
#include "ps/testing/in_process_shards.h"
#include "tests/in_process/chief_testing.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 11;
constexpr int64_t kTrainSteps = 20;

class ChiefTaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("chief_task_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    options_.cluster.ps = {{"127.0.0.1", 2000}};  // where InProcessShards serves
    options_.cluster.workers = {{"127.0.0.1", 3000}};
    options_.cluster.chief = {"127.0.0.1", 1999};
    options_.bind_host = "127.0.0.1";  // decided without looking at the machine's interfaces
    options_.cluster_id = kCluster;
    options_.job.data.format = "csv";
    options_.job.data.train_file = WriteCsv(dir_.string() + "/train.csv", 150, 1);
    options_.job.data.test_file = WriteCsv(dir_.string() + "/test.csv", 60, 2);
    options_.job.model = "mlp";
    options_.shard.optimizer.learning_rate = 0.5f;
    options_.train_steps = kTrainSteps;
    options_.eval_every_steps = 10;
    options_.progress_every_secs = 0;
    options_.rpc_timeout_ms = 2000;
    options_.run_dir = (dir_ / "run").string();

    Job job = LoadJob(options_.job, /*with_test=*/false).value();
    job_description_ = job.Describe();
    std::unique_ptr<Model> model = MakeJobModel(job).value();
    PlacementOptions placement;
    placement.num_shards = 1;
    worker_ = std::make_unique<StepByStepWorker>(
        shards_.transport(), options_.cluster,
        Placement::Compute(WithGlobalStep(model->variables()), placement).value(), job, kCluster);
    ChannelOptions chief;
    chief.peer_name = "chief";
    chief.endpoint = options_.cluster.chief.Endpoint();
    chief.cluster_id = kCluster;
    chief.role = wire::Role::Worker;
    chief.rpc_timeout_ms = 2000;
    chief_ = shards_.transport().Connect(chief);
    // A ps speaks before its init tells it the cluster id.
    chief.role = wire::Role::Ps;
    chief.cluster_id = 0;
    ps_heartbeats_ = shards_.transport().Connect(chief);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The chief's pause: time moves on; the worker joins the chief at the
  // first look, trains a step at each, and leaves at the last step.
  void Look(MonotonicClock::Duration d) {
    clock_.Advance(d);
    if (++looks_ > 3000) stop_ = true;  // a broken chief fails, not hangs
    if (looks_ == 1) joined_ = chief_->Call(JoinMessage());
    if (looks_ == 1) ps_heard_ = ps_heartbeats_->Call(HeartbeatMessage()).ok();
    worker_->StepUntil(kTrainSteps);
    if (!left_ && worker_->global_step() == kTrainSteps) {
      left_ = chief_->Call(LeaveMessage()).ok();
    }
  }

  OutgoingMessage JoinMessage() const {
    const std::string job = job_description_;
    const uint64_t hash = worker_->placement_hash();
    OutgoingMessage request;
    request.type = wire::MessageType::JoinRequest;
    request.extras = [hash, job](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.join =
          wire::CreateJoinInfo(fbb, hash, wire::ClusterState::Starting, 0, fbb.CreateString(job));
      return extras;
    };
    return request;
  }
  static OutgoingMessage HeartbeatMessage() {
    OutgoingMessage request;
    request.type = wire::MessageType::HeartbeatRequest;
    return request;
  }
  static OutgoingMessage LeaveMessage() {
    OutgoingMessage request;
    request.type = wire::MessageType::ReportRequest;
    request.extras = [](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.report = wire::CreateReport(fbb, 0, 0, 0, 0, 0, 0, /*done=*/true);
      return extras;
    };
    return request;
  }

  Status RunChief() {
    return RunChiefOn(
        options_, shards_.transport(), clock_, [this](MonotonicClock::Duration d) { Look(d); },
        stop_);
  }

  std::filesystem::path dir_;
  ChiefOptions options_;
  FakeClock clock_;
  std::atomic<bool> stop_{false};
  InProcessShards shards_{1};
  std::unique_ptr<StepByStepWorker> worker_;
  std::unique_ptr<Connection> chief_;  // the worker's
  std::unique_ptr<Connection> ps_heartbeats_;
  bool ps_heard_ = false;
  std::string job_description_;
  StatusOr<ReceivedMessage> joined_ = Unavailable("never asked");
  bool left_ = false;
  int looks_ = 0;
};

TEST_F(ChiefTaskTest, ServesItsWorkerAndTrainsToTheStepCount) {
  const Status ran = RunChief();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  ASSERT_TRUE(joined_.ok()) << joined_.status().ToString();
  EXPECT_EQ(joined_->header().join()->state(), wire::ClusterState::Training);
  EXPECT_TRUE(left_);
  EXPECT_EQ(worker_->pushes(), kTrainSteps);
  EXPECT_TRUE(ps_heard_);
  // The last evaluation's line: the ps is alive (it spoke), the worker gone.
  std::ifstream metrics(dir_ / "run" / "metrics.jsonl");
  std::string line, last;
  while (std::getline(metrics, line)) last = line;
  EXPECT_NE(last.find("\"live_ps\": 1,"), std::string::npos) << last;
  EXPECT_NE(last.find("\"step\": 20,"), std::string::npos) << last;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "run" / "model.bin"));
}

}  // namespace
}  // namespace pst
