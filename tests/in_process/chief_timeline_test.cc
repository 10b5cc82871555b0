// ChiefTimeline: the chief's run from training opened to its end, against a
// real PsService shard over an in-process transport, with a FakeClock. The
// timeline's pause between two looks moves the clock and lets a small
// in-test worker train one step: no sockets, no processes, no sleeps.
#include "chief/chief_timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chief/chief_checkpoints.h"
#include "chief/chief_reporter.h"
#include "chief/chief_state.h"
#include "chief/reporting/cluster_evaluator.h"
#include "chief/reporting/metrics_writer.h"
#include "chief/shard_keeper.h"
#include "common/clock.h"
#include "job/job.h"
#include "ps/ps_client.h"
#include "ps/ps_service.h"
#include "ps/shard_admin.h"
#include "tests/in_process/chief_testing.h"
#include "transport/in_process.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 9;
constexpr int64_t kTrainSteps = 30;
// Far more looks than any run here takes: past them the test stops the run
// (as a signal would), so a broken timeline fails instead of hanging.
constexpr int kMostLooks = 3000;

// One ps shard over `transport`. Restart() replaces its PsService with an
// empty one: a ps restarted without its variables.
class RestartableShard {
 public:
  RestartableShard(Transport& transport, const HostPort& address) {
    ServerOptions options;
    options.name = "ps:0";
    options.endpoint = address.Endpoint();
    options.role = wire::Role::Ps;
    server_ = transport.Listen(options, [this](const ReceivedMessage& r, RequestContext& c) {
      return service_->Handle(r, c.peer_address());
    });
    Restart();
    EXPECT_TRUE(server_->Start().ok());
  }
  void Restart() { service_ = std::make_unique<PsService>(server_.get(), nullptr); }
  PsService& service() { return *service_; }
  // True once the chief shut the shard down.
  bool stopped() { return server_->WaitFor(std::chrono::milliseconds(0)); }

 private:
  std::unique_ptr<PsService> service_;
  std::unique_ptr<Server> server_;  // after service_: stopped first
};

class ChiefTimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("chief_timeline_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    options_.cluster.ps = {{"127.0.0.1", 2000}};
    options_.cluster.workers = {{"127.0.0.1", 3000}};
    options_.cluster.chief = {"127.0.0.1", 1999};
    options_.job.data.format = "csv";
    options_.job.data.train_file = WriteCsv(dir_.string() + "/train.csv", 150, 1);
    options_.job.data.test_file = WriteCsv(dir_.string() + "/test.csv", 60, 2);
    options_.job.model = "mlp";
    options_.shard.optimizer.learning_rate = 0.5f;
    options_.train_steps = kTrainSteps;
    options_.eval_every_steps = 10;
    options_.log_every_steps = 10;
    options_.progress_every_secs = 0;
    options_.heartbeat_timeout_ms = 1000;
    options_.rpc_timeout_ms = 2000;
    options_.run_dir = dir_.string();
    Build();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The chief's pieces for options_ (again after a test changed them).
  void Build() {
    Job job = LoadJob(options_.job, /*with_test=*/true).value();
    std::unique_ptr<Model> model = MakeJobModel(job).value();
    PlacementOptions placement;
    placement.num_shards = 1;
    Placement computed = Placement::Compute(WithGlobalStep(model->variables()), placement).value();
    worker_ =
        std::make_unique<StepByStepWorker>(transport_, options_.cluster, computed, job, kCluster);
    ClientIdentity identity;
    identity.role = wire::Role::Chief;
    identity.cluster_id = kCluster;
    identity.rpc_timeout_ms = options_.rpc_timeout_ms;
    ps_ = std::make_unique<PsClient>(transport_, options_.cluster, std::move(computed), identity);
    admin_ = std::make_unique<ShardAdmin>(ps_.get());
    lr_plateau_.reset();
    if (options_.shard.lr_schedule == "plateau") {
      lr_plateau_ = std::make_unique<LrPlateau>(LrScheduleOf(options_.shard).value(),
                                                options_.lr_plateau, admin_.get());
    }
    state_ = std::make_unique<ChiefState>(ps_->placement().Hash(), options_.train_steps,
                                          static_cast<int>(options_.cluster.workers.size()), 1,
                                          job.Describe(), clock_);
    keeper_ = std::make_unique<ShardKeeper>(options_, admin_.get(), nullptr, nullptr, stop_, clock_,
                                            lr_plateau_.get());
    checkpoints_ = std::make_unique<ChiefCheckpoints>(options_, nullptr, nullptr, keeper_.get(),
                                                      clock_, lr_plateau_.get());
    reporter_ = std::make_unique<ChiefReporter>(options_, state_.get(),
                                                MetricsWriter::Open(MetricsPath()).value(), stdout,
                                                lr_plateau_.get());
    evaluator_ = std::make_unique<ClusterEvaluator>(std::move(model), std::move(job), ps_.get());
    timeline_ = std::make_unique<ChiefTimeline>(
        options_, *state_, nullptr, *keeper_, *checkpoints_, *reporter_, *evaluator_, stop_, clock_,
        [this](MonotonicClock::Duration d) { Look(d); }, lr_plateau_.get());
  }

  // What the chief does before it opens training; then the timeline's run.
  Status OpenAndRun() {
    PST_RETURN_IF_ERROR(keeper_->WaitForShards());
    std::vector<Tensor> untrained = keeper_->InitialValues();
    untrained.erase(untrained.begin());  // the global step
    PST_RETURN_IF_ERROR(evaluator_->EvaluateUntrained(untrained));
    PST_ASSIGN_OR_RETURN(const int64_t start_step, keeper_->Start());
    state_->set_state(wire::ClusterState::Training);
    state_->RecordHeartbeat(wire::Role::Worker, 0);  // the worker has spoken
    return timeline_->Run(start_step, clock_.Now(), /*earlier_seconds=*/0);
  }

  // The timeline's pause: time moves on, the worker trains a step, and
  // then what the test adds happens.
  void Look(MonotonicClock::Duration d) {
    clock_.Advance(d);
    if (++looks_ > kMostLooks) stop_ = true;
    for (int i = 0; i < steps_per_look_; ++i) worker_->StepUntil(options_.train_steps);
    if (on_look_) on_look_();
  }

  std::string MetricsPath() const { return dir_.string() + "/metrics.jsonl"; }
  // The global step of each evaluation in metrics.jsonl.
  std::vector<int64_t> EvaluatedSteps() const { return MetricsValues<int64_t>("step"); }
  // `key`'s value in each line of metrics.jsonl that has it.
  template <typename T>
  std::vector<T> MetricsValues(const std::string& key) const {
    std::vector<T> values;
    std::ifstream in(MetricsPath());
    const std::string quoted = "\"" + key + "\":";
    for (std::string line; std::getline(in, line);) {
      const size_t at = line.find(quoted);
      if (at != std::string::npos) values.push_back(std::stod(line.substr(at + quoted.size())));
    }
    return values;
  }

  std::filesystem::path dir_;
  ChiefOptions options_;
  FakeClock clock_;
  std::atomic<bool> stop_{false};
  InProcessTransport transport_;
  RestartableShard shard_{transport_, {"127.0.0.1", 2000}};
  std::unique_ptr<StepByStepWorker> worker_;
  std::unique_ptr<PsClient> ps_;
  std::unique_ptr<ShardAdmin> admin_;      // over ps_
  std::unique_ptr<LrPlateau> lr_plateau_;  // null unless --lr_schedule=plateau
  std::unique_ptr<ChiefState> state_;
  std::unique_ptr<ShardKeeper> keeper_;
  std::unique_ptr<ChiefCheckpoints> checkpoints_;
  std::unique_ptr<ChiefReporter> reporter_;
  std::unique_ptr<ClusterEvaluator> evaluator_;
  std::unique_ptr<ChiefTimeline> timeline_;
  std::function<void()> on_look_;  // the test's event, at each look
  int steps_per_look_ = 1;         // the worker's steps between two looks
  int looks_ = 0;
};

TEST_F(ChiefTimelineTest, TrainsToTheStepCountEvaluatingOnCadenceThenStopsThePs) {
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_EQ(worker_->pushes(), kTrainSteps);
  // Every --eval_every_steps while training, and the final model.
  EXPECT_EQ(EvaluatedSteps(), (std::vector<int64_t>{10, 20, kTrainSteps}));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "model.bin"));
  EXPECT_TRUE(shard_.stopped());
  EXPECT_EQ(state_->state(), wire::ClusterState::Stopping);
}

// The evaluation contract (--eval_every_steps' --help): a fast job whose
// step passes two or three multiples of --eval_every_steps between two looks
// of the chief is evaluated once per look, at the step the chief saw, and
// once at the end; never once per multiple, and never twice for one model.
TEST_F(ChiefTimelineTest, AStepPastSeveralMultiplesAtOnceIsEvaluatedOnceAtTheStepSeen) {
  options_.train_steps = 100;
  Build();
  steps_per_look_ = 25;  // looks at 0, 25, 50, 75, 100; multiples of 10 between them
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_EQ(worker_->pushes(), 100);
  EXPECT_EQ(EvaluatedSteps(), (std::vector<int64_t>{25, 50, 75, 100}));
}

// A step that jumps past every multiple before the chief's first look at a
// moving step: no evaluation while training, and the final one.
TEST_F(ChiefTimelineTest, AJobFasterThanTheChiefsFirstLookIsEvaluatedOnlyAtTheEnd) {
  steps_per_look_ = kTrainSteps;
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_EQ(EvaluatedSteps(), (std::vector<int64_t>{kTrainSteps}));
}

// A ps restarted without its variables: every shard is initialized again
// and training starts over from step 0 (no checkpoint), its steps
// evaluated again.
TEST_F(ChiefTimelineTest, APsRestartedEmptyIsInitializedAgainAndTrainingStartsOver) {
  bool restarted = false;
  on_look_ = [&] {
    if (!restarted && worker_->global_step() == 15) {
      shard_.Restart();
      restarted = true;
    }
  };
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_TRUE(restarted);
  EXPECT_TRUE(shard_.service().store().initialized());
  EXPECT_EQ(worker_->pushes(), 15 + kTrainSteps);
  EXPECT_EQ(EvaluatedSteps(), (std::vector<int64_t>{10, 10, 20, kTrainSteps}));
}

// --lr_schedule=plateau with a min_delta no loss can beat: the first
// evaluation (step 10) sets the best, each later one while training lowers
// the rate (patience 1), and the shard applies each lowering. The final
// evaluation (step 40) decides nothing: training is over. Each evaluation's
// rate in metrics.jsonl is the one before its own lowering.
TEST_F(ChiefTimelineTest, APlateauLowersTheRateOnTheShardsAfterEachStalledEvaluation) {
  options_.train_steps = 40;
  options_.job.data.validation_examples = 30;
  options_.shard.lr_schedule = "plateau";
  options_.shard.lr_decay_rate = 0.5f;
  options_.lr_plateau.patience = 1;
  options_.lr_plateau.min_delta = 100;
  Build();
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_EQ(EvaluatedSteps(), (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(lr_plateau_->lowerings(), 2);
  EXPECT_EQ(shard_.service().store().Stats().lr_lowerings, 2);
  const std::vector<double> rates = MetricsValues<double>("learning_rate");
  ASSERT_EQ(rates.size(), 4u);
  EXPECT_NEAR(rates[0], 0.5, 1e-7);
  EXPECT_NEAR(rates[1], 0.5, 1e-7);
  EXPECT_NEAR(rates[2], 0.25, 1e-7);
  EXPECT_NEAR(rates[3], 0.125, 1e-7);
}

// With a validation set the best model is kept, and training stops after
// --early_stopping_patience evaluations without a better validation score:
// this problem is learned within a few evaluations, long before 400 steps.
TEST_F(ChiefTimelineTest, KeepsTheBestModelAndStopsEarlyOnceValidationStopsImproving) {
  options_.train_steps = 400;
  options_.early_stopping_patience = 2;
  options_.job.data.validation_examples = 50;
  Build();
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  const std::vector<int64_t> evaluated = EvaluatedSteps();
  ASSERT_GE(evaluated.size(), 3u);
  EXPECT_LT(evaluated.back(), options_.train_steps) << "it did not stop early";
  EXPECT_LT(worker_->pushes(), options_.train_steps);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "best_model.bin"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "model.bin"));
  EXPECT_TRUE(shard_.stopped());
}

TEST_F(ChiefTimelineTest, WithoutPatienceItTrainsToTheStepCountAndStillKeepsTheBest) {
  options_.train_steps = 60;
  options_.job.data.validation_examples = 50;
  Build();
  const Status ran = OpenAndRun();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_EQ(worker_->pushes(), 60);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "best_model.bin"));
}

TEST_F(ChiefTimelineTest, ANonFiniteLossStopsTheClusterAndFailsTheRun) {
  on_look_ = [&] {
    if (worker_->global_step() != 12) return;
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateReport(fbb, std::nanf(""), 100));
    state_->RecordReport(0, 12, *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer()));
  };
  const Status ran = OpenAndRun();
  EXPECT_EQ(ran.code(), Code::kAborted) << ran.ToString();
  EXPECT_NE(ran.message().find("training diverged"), std::string::npos) << ran.ToString();
  EXPECT_LT(worker_->pushes(), kTrainSteps);
  EXPECT_TRUE(shard_.stopped());
}

TEST_F(ChiefTimelineTest, ASignalStopsTheRunBeforeTheStepCount) {
  on_look_ = [&] {
    if (worker_->global_step() == 12) stop_ = true;
  };
  const Status ran = OpenAndRun();
  EXPECT_EQ(ran.code(), Code::kAborted) << ran.ToString();
  EXPECT_NE(ran.message().find("stopped by a signal"), std::string::npos) << ran.ToString();
  EXPECT_EQ(worker_->pushes(), 12);
  EXPECT_EQ(EvaluatedSteps(), (std::vector<int64_t>{10}));
  EXPECT_TRUE(shard_.stopped());
}

// Slurm's scancel or a pod eviction: SIGTERM, then SIGKILL after a grace.
// The final checkpoint must not wait for a worker the chief never heard
// from (a slow start under load): it would still be waiting at the SIGKILL.
TEST_F(ChiefTimelineTest, ASignalDoesNotWaitForAWorkerNeverHeardFrom) {
  options_.cluster.workers.push_back({"127.0.0.1", 3001});  // never speaks
  Build();
  MonotonicClock::TimePoint signalled;
  on_look_ = [&] {
    if (worker_->global_step() == 12 && !stop_) {
      stop_ = true;
      signalled = clock_.Now();
    }
  };
  const Status ran = OpenAndRun();
  EXPECT_EQ(ran.code(), Code::kAborted) << ran.ToString();
  EXPECT_LT(clock_.Now() - signalled, options_.late_worker_grace());
  EXPECT_TRUE(shard_.stopped());
}

// A ps restarted empty after training ended, while the chief waits to tell
// a late worker: Finish meets a ps failure and goes through the recovery
// path. Without a checkpoint the cluster goes back to step 0, which the
// workers, gone, cannot train again: the run fails saying so, instead of
// with the shard's "not initialized".
TEST_F(ChiefTimelineTest, APsLostWhileTheRunIsFinishedIsRecoveredOrNamed) {
  options_.cluster.workers.push_back({"127.0.0.1", 3001});  // never speaks
  Build();
  bool restarted = false;
  on_look_ = [&] {
    if (!restarted && state_->state() == wire::ClusterState::Stopping) {
      shard_.Restart();
      restarted = true;
    }
  };
  const Status ran = OpenAndRun();
  ASSERT_TRUE(restarted);
  EXPECT_EQ(ran.code(), Code::kAborted) << ran.ToString();
  EXPECT_NE(ran.message().find("a ps was lost while the run was being finished"), std::string::npos)
      << ran.ToString();
}

}  // namespace
}  // namespace pst
