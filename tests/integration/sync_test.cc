// Synchronous training with real processes: exactness against one process,
// averaging, spare workers against a straggler, and a killed worker.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <limits>
#include <map>
#include <thread>

#include "common/tensor_file.h"
#include "data/idx_reader.h"
#include "data/input_pipeline.h"
#include "model/layers/initializer.h"
#include "model/zoo/model_zoo.h"
#include "ps/optimizers/optimizer.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::seconds;
constexpr float kLearningRate = 0.5f;
constexpr int kBatch = 50;

class SyncTest : public SyntheticDataTest {
 protected:
  static std::vector<std::string> SyncFlags(const std::string& replicas, int train_steps) {
    return {"--data_dir=" + data_dir(),
            "--model=mlp",
            "--mode=sync",
            "--replicas_to_aggregate=" + replicas,
            "--batch_size=" + std::to_string(kBatch),
            "--learning_rate=" + std::to_string(kLearningRate),
            "--train_steps=" + std::to_string(train_steps),
            "--eval_every_steps=0",
            "--rpc_timeout_ms=20000"};
  }

  static void ExpectAllExitZero(LocalCluster& cluster) {
    const auto exits = cluster.WaitAll(seconds(240));
    for (const TaskExit& e : exits) {
      EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << cluster.task("chief").Log();
    }
  }

  // Runs a sync cluster (2 ps) to the end; every task must exit 0.
  static std::unique_ptr<LocalCluster> Run(int workers, int replicas, int train_steps) {
    auto cluster = std::make_unique<LocalCluster>(2, workers, TestDir());
    std::vector<std::string> flags = SyncFlags(std::to_string(replicas), train_steps);
    flags.push_back("--run_dir=" + cluster->dir());
    cluster->StartAll(flags);
    ExpectAllExitZero(*cluster);
    return cluster;
  }

  // 2 ps, 3 workers; worker 2 sleeps `delay_ms` in every step.
  // 2 ps, 3 workers; worker 2 sleeps `delay_ms` in every step from its
  // step `from_step` on. `replicas`: --replicas_to_aggregate.
  static std::unique_ptr<LocalCluster> RunWithStraggler(const std::string& replicas,
                                                        int train_steps, int delay_ms,
                                                        int64_t from_step = 0) {
    auto cluster = std::make_unique<LocalCluster>(2, 3, TestDir());
    const std::vector<std::string> flags = SyncFlags(replicas, train_steps);
    for (int k = 0; k < 2; ++k) cluster->StartTask("ps", k, flags);
    cluster->StartTask("chief", 0, flags);
    cluster->StartTask("worker", 0, flags);
    cluster->StartTask("worker", 1, flags);
    std::vector<std::string> slow = flags;
    slow.push_back("--simulated_delay_ms=" + std::to_string(delay_ms));
    slow.push_back("--simulated_delay_from_step=" + std::to_string(from_step));
    cluster->StartTask("worker", 2, slow);
    ExpectAllExitZero(*cluster);
    return cluster;
  }

  // What one process computes: `workers` input pipelines, each step the
  // average of their batches' gradients applied with plain SGD.
  static std::map<std::string, Tensor> TrainInOneProcess(int workers, int steps) {
    auto model = MakeModel("mlp");
    CHECK(model.ok());
    auto train = LoadMnist(data_dir(), true);
    CHECK(train.ok());
    std::vector<std::unique_ptr<InputPipeline>> inputs;
    for (int w = 0; w < workers; ++w) {
      InputPipelineOptions options;
      options.batch_size = kBatch;
      options.worker_index = w;
      options.num_workers = workers;
      options.seed = 1;
      inputs.push_back(std::move(InputPipeline::Create(*train, options)).value());
      inputs.back()->Start();
    }
    std::vector<Tensor> params;
    for (const VariableSpec& spec : (*model)->variables()) {
      params.push_back(InitializeVariable(spec, 1));
    }
    OptimizerConfig sgd;
    sgd.learning_rate = kLearningRate;
    auto optimizer = std::move(MakeOptimizer(sgd)).value();
    std::vector<SlotSet> slots(params.size());
    std::vector<Tensor> grads;
    for (int step = 0; step < steps; ++step) {
      std::vector<std::vector<float>> sum(params.size());
      for (int w = 0; w < workers; ++w) {
        auto batch = inputs[w]->Next();
        CHECK(batch.ok());
        CHECK((*model)->ComputeGradients(params, batch->batch, &grads).ok());
        for (size_t v = 0; v < params.size(); ++v) {
          sum[v].resize(grads[v].num_elements(), 0.0f);
          for (int64_t i = 0; i < grads[v].num_elements(); ++i) sum[v][i] += grads[v].f32()[i];
        }
      }
      for (size_t v = 0; v < params.size(); ++v) {
        for (float& x : sum[v]) x *= 1.0f / workers;
        optimizer->Apply(params[v].f32(), sum[v].data(), params[v].num_elements(), 1.0f, &slots[v]);
      }
    }
    std::map<std::string, Tensor> out;
    for (size_t v = 0; v < params.size(); ++v) out[(*model)->variables()[v].name] = params[v];
    return out;
  }

  // max |a - b| / max |b| over every variable.
  static double RelativeError(const std::string& model_file,
                              const std::map<std::string, Tensor>& expected) {
    auto trained = ReadTensorFile(model_file);
    if (!trained.ok()) {  // a failure that says why, not a crash of the whole suite
      ADD_FAILURE() << trained.status().ToString();
      return std::numeric_limits<double>::infinity();
    }
    double diff = 0, scale = 0;
    size_t variables = 0;
    for (const auto& [name, tensor] : *trained) {
      if (name.rfind("@model/", 0) == 0) continue;  // what rebuilding the model needs
      ++variables;
      const Tensor& want = expected.at(name);
      for (int64_t i = 0; i < want.num_elements(); ++i) {
        diff = std::max(diff, static_cast<double>(std::abs(tensor.f32()[i] - want.f32()[i])));
        scale = std::max(scale, static_cast<double>(std::abs(want.f32()[i])));
      }
    }
    EXPECT_EQ(variables, expected.size());
    return diff / scale;
  }
};

TEST_F(SyncTest, OneWorkerEqualsOneProcessSgd) {
  constexpr int kSteps = 40;
  auto cluster = Run(1, 1, kSteps);
  EXPECT_EQ(ReportValue(cluster->task("chief").Log(), "Global-Step: "), kSteps);
  EXPECT_LE(RelativeError(cluster->dir() + "/model.bin", TrainInOneProcess(1, kSteps)), 1e-6);
}

TEST_F(SyncTest, ThreeWorkersEqualOneProcessAveraging) {
  constexpr int kSteps = 30;
  auto cluster = Run(3, 3, kSteps);
  EXPECT_LE(RelativeError(cluster->dir() + "/model.bin", TrainInOneProcess(3, kSteps)), 1e-5);
}

TEST_F(SyncTest, SpareWorkerLetsTheStepRateIgnoreAStraggler) {
  auto cluster = RunWithStraggler(/*replicas=*/"2", /*train_steps=*/400, /*delay_ms=*/100);
  const std::string straggler = cluster->task("worker", 2).Log();
  // Several steps pass between two consecutive pushes of the straggler, and
  // its late gradients are reported stale.
  EXPECT_GE(ReportValue(straggler, "largest token gap ").value_or(0), 3) << straggler;
  EXPECT_GT(ReportValue(straggler, ", stale ").value_or(0), 0) << straggler;
  const std::string chief = cluster->task("chief").Log();
  EXPECT_GT(ReportValue(chief, "Stale-Gradients-Dropped: ").value_or(0), 0) << chief;
  EXPECT_EQ(ReportValue(chief, "Global-Step: "), 400);
  EXPECT_LT(ReportValue(chief, "worker:2=").value_or(400), 400);
}

TEST_F(SyncTest, WithoutSpareEveryStepWaitsForTheStraggler) {
  auto cluster = RunWithStraggler(/*replicas=*/"3", /*train_steps=*/30, /*delay_ms=*/30);
  const std::string chief = cluster->task("chief").Log();
  EXPECT_EQ(ReportValue(chief, "worker:2="), 30) << chief;  // every step aggregated it
  EXPECT_EQ(ReportValue(chief, "Stale-Gradients-Dropped: "), 0) << chief;
}

// --replicas_to_aggregate=auto: all three gradients while the workers are
// alike; worker 2 turns 100 ms slow at its step 300 and the chief stops
// waiting for it (DESIGN section 7, adaptive spares).
TEST_F(SyncTest, AutoQuorumStopsWaitingForAWorkerThatTurnsSlow) {
  constexpr int kSteps = 500;
  auto cluster = RunWithStraggler("auto", kSteps, /*delay_ms=*/100, /*from_step=*/300);
  const std::string chief = cluster->task("chief").Log();
  EXPECT_EQ(ReportValue(chief, "Global-Step: "), kSteps) << chief;
  EXPECT_NE(chief.find("sync, --replicas_to_aggregate=auto"), std::string::npos) << chief;
  // The N it ended with is below 3 (steps before 300 may have seen changes
  // too: three workers share two cores here).
  EXPECT_LT(ReportValue(chief, " aggregates ").value_or(3), 3) << chief;
  // Fixed at 3, every step would wait for its gradient: 500 of them.
  const int64_t straggler = ReportValue(chief, "worker:2=").value_or(kSteps);
  EXPECT_LT(straggler, 300 + (kSteps - 300) / 2) << chief;
  // The others did not wait: steps passed between two of its tokens.
  const std::string slow = cluster->task("worker", 2).Log();
  EXPECT_GE(ReportValue(slow, "largest token gap ").value_or(0), 3) << slow;
}

TEST_F(SyncTest, KilledWorkerWithASpareDoesNotStopTraining) {
  auto cluster = std::make_unique<LocalCluster>(2, 3, TestDir());
  std::vector<std::string> flags = SyncFlags(/*replicas=*/"2", /*train_steps=*/500);
  for (const char* f :
       {"--log_every_steps=20", "--simulated_delay_ms=5", "--heartbeat_timeout_ms=1000"}) {
    flags.push_back(f);
  }
  cluster->StartAll(flags);
  ChildProcess& chief = cluster->task("chief");
  // Kill worker 1 once training is well under way.
  for (int i = 0; i < 2000 && ReportValue(chief.Log(), "Step: ").value_or(0) < 60; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(cluster->task("worker", 1).Running()) << "the run ended before the kill";
  cluster->task("worker", 1).Signal(SIGKILL);
  EXPECT_EQ(chief.Wait(seconds(240)), 0) << chief.Log();
  EXPECT_EQ(ReportValue(chief.Log(), "Global-Step: "), 500);
  EXPECT_NE(chief.Log().find("worker:1 declared dead"), std::string::npos) << chief.Log();
  for (int w : {0, 2}) EXPECT_EQ(cluster->task("worker", w).Wait(seconds(60)), 0);
  for (int k : {0, 1}) EXPECT_EQ(cluster->task("ps", k).Wait(seconds(60)), 0);
}

TEST(SyncFlagsTest, QuorumAboveWorkersExitsTwo) {
  LocalCluster cluster(1, 2, MakeTestDir("bad-replicas"));
  ChildProcess& chief = cluster.StartTask(
      "chief", 0, {"--mode=sync", "--replicas_to_aggregate=3", "--data_dir=/nonexistent"});
  EXPECT_EQ(chief.Wait(seconds(30)), 2);
  EXPECT_NE(chief.Log().find("--replicas_to_aggregate=3 must be in 1..2"), std::string::npos)
      << chief.Log();
}

}  // namespace
}  // namespace pst
