// The worker's whole loop against an in-process ps shard and chief (the real
// PsService and ChiefService over an InProcessTransport): no sockets, no
// processes, no sleeps. Here, above both, since it joins the worker to the chief.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chief/chief_service.h"
#include "chief/chief_state.h"
#include "chief/sync/ssp_coordinator.h"
#include "data/dataset.h"
#include "model/layers/initializer.h"
#include "model/zoo/model_zoo.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"
#include "worker/worker_task.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 5;
constexpr int64_t kTrainSteps = 40;

// 300 rows of 4 features, 3 classes around centres of their own.
std::string WriteCsv(const std::string& dir) {
  std::mt19937 rng(1);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  const std::string path = dir + "/train.csv";
  std::ofstream out(path);
  for (int i = 0; i < 300; ++i) {
    const int label = i % 3;
    out << label;
    for (int j = 0; j < 4; ++j) out << "," << (j == label ? 2.0f : 0.0f) + noise(rng);
    out << "\n";
  }
  return path;
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("worker_loop_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    options_.cluster.ps = {{"127.0.0.1", 2000}};  // where InProcessShards serves
    options_.cluster.workers = {{"127.0.0.1", 3000}};
    options_.cluster.chief = {"127.0.0.1", 1999};
    options_.cluster_id = kCluster;
    options_.job.data.format = "csv";
    options_.job.data.train_file = WriteCsv(dir_.string());
    options_.job.model = "mlp";
    options_.batch_size = 20;
    options_.rpc_timeout_ms = 5000;
    options_.join_timeout_ms = 5000;
    options_.report_every_steps = 5;

    // What the chief would compute and do before opening training.
    Job job = LoadJob(options_.job, /*with_test=*/false).value();
    std::unique_ptr<Model> model = MakeModel(job.model, job.input, job.num_classes).value();
    PlacementOptions placement;
    placement.num_shards = 1;
    placement_ = std::make_unique<Placement>(
        Placement::Compute(WithGlobalStep(model->variables()), placement).value());
    job_description_ = job.Describe();
    ASSERT_TRUE(StartAgain().ok());
    ServerOptions chief;
    chief.name = "chief";
    chief.endpoint = options_.cluster.chief.Endpoint();
    chief.role = wire::Role::Chief;
    chief.cluster_id = kCluster;
    chief_ = shards_.transport().Listen(chief, [this](const ReceivedMessage& r, RequestContext& c) {
      return service_->Handle(r, c);
    });
    ASSERT_TRUE(chief_->Start().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // What the chief does before opening training: the shard initialized
  // (again), a fresh chief state. No worker may run meanwhile.
  Status StartAgain() {
    std::vector<Tensor> values;
    for (const VariableSpec& spec : placement_->variables()) {
      values.push_back(InitializeVariable(spec, 1));
    }
    ShardConfig config;
    config.optimizer.learning_rate = 0.5f;
    config.global_step_variable = kGlobalStepName;
    PST_RETURN_IF_ERROR(ShardAdmin(&*shards_.Client(*placement_, kCluster, wire::Role::Chief))
                            .Initialize(config, values));
    initial_ = values;
    state_ = std::make_unique<ChiefState>(placement_->Hash(), kTrainSteps, 1, 1, job_description_);
    state_->set_state(wire::ClusterState::Training);
    service_ = std::make_unique<ChiefService>(state_.get(), nullptr, 1, 1);
    return Status::OK();
  }

  // Runs a worker with `options` as the chief would see it through: the
  // chief closes the run once the global step reaches the step count, and
  // the worker holds until then (WorkerTask::HoldUntilClosed).
  Status RunClosedAtTheStepCount(const WorkerOptions& options, std::atomic<bool>& stop) {
    std::thread chief([&] {
      std::unique_ptr<PsClient> client = shards_.Client(*placement_, kCluster);
      for (StatusOr<int64_t> step = 0; !stop.load() && (!step.ok() || *step < kTrainSteps);
           step = client->GlobalStep()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      state_->set_state(wire::ClusterState::Stopping);
    });
    const Status ran = RunWorkerOn(options, shards_.transport(), stop);
    stop = true;  // a worker that failed early leaves the chief nothing to wait for
    chief.join();
    return ran;
  }

  std::filesystem::path dir_;
  WorkerOptions options_;
  InProcessShards shards_{1};
  std::unique_ptr<Placement> placement_;
  std::vector<Tensor> initial_;
  std::string job_description_;
  std::unique_ptr<ChiefState> state_;
  std::unique_ptr<SspCoordinator> ssp_;  // --mode=ssp only
  std::unique_ptr<ChiefService> service_;
  std::unique_ptr<Server> chief_;
};

TEST_F(WorkerLoopTest, JoinsTrainsToTheStepCountReportsAndLeaves) {
  std::atomic<bool> stop{false};
  const Status ran = RunClosedAtTheStepCount(options_, stop);
  ASSERT_TRUE(ran.ok()) << ran.ToString();

  EXPECT_TRUE(state_->EveryWorkerDone());
  // A report every 5 local steps, and the holding worker's while it waits
  // for the chief to close: the first of those brings the examples of the
  // last steps, so every example is reported once.
  const ReportWindow reports = state_->TakeWindow();
  EXPECT_GT(reports.reports, (kTrainSteps - 1) / options_.report_every_steps);
  EXPECT_EQ(reports.examples, kTrainSteps * options_.batch_size);

  std::vector<Tensor> now;
  std::unique_ptr<PsClient> client = shards_.Client(*placement_, kCluster);
  std::vector<int> all(placement_->variables().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  ASSERT_TRUE(client->Pull(all, &now).ok());
  EXPECT_EQ(now[0].i64()[0], kTrainSteps);  // the global step: one push per step
  bool changed = false;
  for (size_t v = 1; v < now.size(); ++v) {
    for (int64_t i = 0; i < now[v].num_elements(); ++i) {
      changed |= now[v].f32()[i] != initial_[v].f32()[i];
    }
  }
  EXPECT_TRUE(changed) << "the worker's pushes changed no variable";
}

// --overlap changes when gradients go out and when a push's
// acknowledgement is read, not what is trained: one worker (its pulls see
// its own pushes either way) ends with the same variables, bit for bit,
// and reports every example once, whether each step's push goes whole, in
// a part per layer (--push_bucket_bytes=0: mlp has two), or waited for.
TEST_F(WorkerLoopTest, AnOverlappedWorkerTrainsExactlyAsOneThatWaits) {
  std::vector<std::vector<Tensor>> trained;
  const std::pair<bool, int64_t> settings[] = {{true, 1 << 20}, {true, 0}, {false, 0}};
  for (const auto& [overlap, bucket_bytes] : settings) {
    SCOPED_TRACE(overlap ? "bucket " + std::to_string(bucket_bytes) : "no overlap");
    options_.overlap = overlap;
    options_.push_bucket_bytes = bucket_bytes;
    ASSERT_TRUE(StartAgain().ok());
    std::atomic<bool> stop{false};
    const Status ran = RunClosedAtTheStepCount(options_, stop);
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    EXPECT_EQ(state_->TakeWindow().examples, kTrainSteps * options_.batch_size);
    std::vector<int> all(placement_->variables().size());
    std::iota(all.begin(), all.end(), 0);
    trained.emplace_back();
    ASSERT_TRUE(shards_.Client(*placement_, kCluster)->Pull(all, &trained.back()).ok());
    EXPECT_EQ(trained.back()[0].i64()[0], kTrainSteps);
  }
  for (size_t run = 0; run + 1 < trained.size(); ++run) {
    for (size_t v = 1; v < trained[run].size(); ++v) {
      const Tensor &a = trained[run][v], &b = trained.back()[v];
      ASSERT_EQ(a.num_bytes(), b.num_bytes());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.num_bytes()), 0)
          << "run " << run << ": " << placement_->variables()[v].name;
    }
  }
}

// The L2 distance the variables moved from their initial values.
double DistanceMoved(const std::vector<Tensor>& now, const std::vector<Tensor>& initial) {
  double sum = 0;
  for (size_t v = 1; v < now.size(); ++v) {  // 0 is the global step
    for (int64_t i = 0; i < now[v].num_elements(); ++i) {
      const double d = now[v].f32()[i] - initial[v].f32()[i];
      sum += d * d;
    }
  }
  return std::sqrt(sum);
}

// --clip_norm: every SGD update is at most learning rate x clip_norm long,
// so 40 steps move the variables at most 40 x 0.5 x 0.01 = 0.2, where the
// same run unclipped moves them further.
TEST_F(WorkerLoopTest, ClippedGradientsBoundEveryUpdate) {
  options_.clip_norm = 0.01f;
  std::atomic<bool> stop{false};
  ASSERT_TRUE(RunClosedAtTheStepCount(options_, stop).ok());
  std::vector<int> all(placement_->variables().size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<Tensor> now;
  ASSERT_TRUE(shards_.Client(*placement_, kCluster)->Pull(all, &now).ok());
  ASSERT_EQ(now[0].i64()[0], kTrainSteps);
  const double clipped = DistanceMoved(now, initial_);
  EXPECT_GT(clipped, 0);
  EXPECT_LE(clipped, kTrainSteps * 0.5 * 0.01 * (1 + 1e-4));
}

TEST_F(WorkerLoopTest, UnclippedGradientsMoveTheVariablesFurther) {
  std::atomic<bool> stop{false};
  ASSERT_TRUE(RunClosedAtTheStepCount(options_, stop).ok());
  std::vector<int> all(placement_->variables().size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<Tensor> now;
  ASSERT_TRUE(shards_.Client(*placement_, kCluster)->Pull(all, &now).ok());
  EXPECT_GT(DistanceMoved(now, initial_), kTrainSteps * 0.5 * 0.01);
}

// Two workers with --mode=ssp --staleness_bound=0: lock-step, each let go
// for exactly its half of the steps.
TEST_F(WorkerLoopTest, SspBoundZeroTrainsTwoWorkersInLockStep) {
  options_.cluster.workers = {{"127.0.0.1", 3000}, {"127.0.0.1", 3001}};
  options_.ssp = true;
  state_ = std::make_unique<ChiefState>(placement_->Hash(), kTrainSteps, 2, 1, job_description_);
  state_->set_state(wire::ClusterState::Training);
  auto log = std::make_unique<std::ostringstream>();
  const std::ostringstream& clocks = *log;
  ssp_ =
      std::make_unique<SspCoordinator>(2, /*bound=*/0, kTrainSteps, chief_.get(), std::move(log));
  service_ = std::make_unique<ChiefService>(state_.get(), nullptr, 2, 1, ssp_.get());

  std::atomic<bool> stop{false};
  WorkerOptions second = options_;
  second.task_index = 1;
  Status second_ran;
  std::thread other([&] { second_ran = RunWorkerOn(second, shards_.transport(), stop); });
  const Status ran = RunWorkerOn(options_, shards_.transport(), stop);
  other.join();
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  ASSERT_TRUE(second_ran.ok()) << second_ran.ToString();

  std::istringstream lines(clocks.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "# ssp_clocks 1");
  std::getline(lines, line);
  std::vector<int64_t> next_clock(2, 0);
  int worker = 0;
  int64_t clock = 0, slowest = 0;
  while (lines >> worker >> clock >> slowest) {
    ASSERT_TRUE(worker == 0 || worker == 1) << worker;
    EXPECT_EQ(clock, next_clock[worker]++);
    EXPECT_EQ(clock, slowest);  // nobody ahead of the slowest
  }
  EXPECT_EQ(next_clock, (std::vector<int64_t>{kTrainSteps / 2, kTrainSteps / 2}));
  std::vector<Tensor> now;
  ASSERT_TRUE(shards_.Client(*placement_, kCluster)->Pull({0}, &now).ok());
  EXPECT_EQ(now[0].i64()[0], kTrainSteps);
}

// The trained parameters' accuracy on the training set (the plain model
// evaluates them: a pipelined worker trains the same variables).
double TrainedAccuracy(const WorkerOptions& options, const Placement& placement,
                       InProcessShards& shards) {
  Job job = LoadJob(options.job, /*with_test=*/false).value();
  std::unique_ptr<Model> model = MakeModel(job.model, job.input, job.num_classes).value();
  std::vector<int> variables(model->variables().size());
  std::iota(variables.begin(), variables.end(), 1);  // 0 is the global step
  std::vector<Tensor> params;
  EXPECT_TRUE(shards.Client(placement, kCluster)->Pull(variables, &params).ok());
  const Dataset& train = job.data.train;
  const Batch all{train.size, train.feature_dim, train.features, train.labels};
  const Model::EvalResult eval = model->Evaluate(params, all).value();
  return static_cast<double>(eval.correct) / static_cast<double>(eval.count);
}

// The baseline for the model-parallel run below: a plain worker's accuracy.
TEST_F(WorkerLoopTest, APlainWorkerLearnsTheProblem) {
  std::atomic<bool> stop{false};
  ASSERT_TRUE(RunClosedAtTheStepCount(options_, stop).ok());
  EXPECT_GE(TrainedAccuracy(options_, *placement_, shards_), 0.9);
}

// --model_parallel=2: the mlp's layers in 2 pipeline stages, batches of 20
// in 3 micro-batches. Its gradients are the plain model's (model/
// pipelined_model_test.cc), so it learns as far in as many steps.
TEST_F(WorkerLoopTest, AModelParallelWorkerLearnsItAsFar) {
  options_.model_parallel = 2;
  options_.micro_batches = 3;
  std::atomic<bool> stop{false};
  const Status ran = RunClosedAtTheStepCount(options_, stop);
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_TRUE(state_->EveryWorkerDone());
  EXPECT_GE(TrainedAccuracy(options_, *placement_, shards_), 0.9);
}

// More stages than the mlp has layers: the worker fails at start, saying so.
TEST_F(WorkerLoopTest, TooManyStagesAreRefused) {
  options_.model_parallel = 4;
  std::atomic<bool> stop{false};
  const Status ran = RunWorkerOn(options_, shards_.transport(), stop);
  EXPECT_EQ(ran.code(), Code::kInvalidArgument) << ran.ToString();
  EXPECT_NE(ran.message().find("has only 3 layers"), std::string::npos) << ran.ToString();
}

TEST_F(WorkerLoopTest, AWorkerOfAnotherJobIsRefused) {
  options_.job.model = "mlp_relu";
  std::atomic<bool> stop{false};
  const Status ran = RunWorkerOn(options_, shards_.transport(), stop);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.code(), Code::kFailedPrecondition) << ran.ToString();
  EXPECT_NE(ran.message().find("runs another job than the chief"), std::string::npos)
      << ran.ToString();
  EXPECT_EQ(state_->live_workers(), 0);  // not admitted
}

// --augment is for images: the csv's feature vectors are refused at start,
// once the data are loaded, naming the flag.
TEST_F(WorkerLoopTest, AugmentingFeatureVectorsIsRefused) {
  options_.augment.crop_padding = 2;
  std::atomic<bool> stop{false};
  const Status ran = RunWorkerOn(options_, shards_.transport(), stop);
  EXPECT_EQ(ran.code(), Code::kInvalidArgument) << ran.ToString();
  EXPECT_EQ(ran.message(), "--augment needs images, but the training examples are 4 features");
  EXPECT_EQ(state_->live_workers(), 0);  // refused before joining
}

}  // namespace
}  // namespace pst
