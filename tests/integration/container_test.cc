// Several jobs on one ps cluster, each in its named container (--container):
// two jobs train side by side to exactly what each reaches alone; a job
// whose chief died leaves its container held, so a job of another model is
// refused it, and a third job's --reset_container takes it while the other
// two jobs train on untouched; a ps stopped with such a container left
// exits cleanly.
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// One job: its flags and where its tasks run.
struct Job {
  std::string name;
  std::vector<std::string> flags;
};

class ContainerTest : public SyntheticDataTest {
 protected:
  // mlp with `learning_rate` for `steps` global steps, one worker (so a run
  // is deterministic, and one on a shared ps must match one alone).
  Job MakeJob(const std::string& name, const std::string& learning_rate, int steps) {
    return {name,
            {"--data_dir=" + data_dir(), "--model=mlp", "--batch_size=50",
             "--learning_rate=" + learning_rate, "--train_steps=" + std::to_string(steps),
             "--eval_every_steps=0", "--mode=async"}};
  }
  // What a job ends with: its chief's test accuracy, and the class
  // probabilities its trained model (RUN_DIR/model.bin) gives the test set.
  struct Outcome {
    double accuracy = -1;
    std::vector<double> probabilities;
  };
  Outcome OutcomeOf(LocalCluster& job) {
    const std::string output = job.dir() + "/predictions.csv";
    auto predict =
        ChildProcess::Start({BinDir() + "/predict", "--model_file=" + job.dir() + "/model.bin",
                             "--data_dir=" + data_dir(), "--output=" + output},
                            job.dir() + "/predict.log");
    EXPECT_TRUE(predict.ok());
    EXPECT_EQ((*predict)->Wait(seconds(60)), 0) << (*predict)->Log();
    Outcome outcome{ReportValue(job.task("chief").Log(), "Test-Accuracy: ").value_or(-1), {}};
    const std::vector<std::string> rows = ReadLines(output);
    for (size_t i = 1; i < rows.size(); ++i) {  // label,predicted,p0,p1,...
      std::istringstream fields(rows[i]);
      std::string field;
      for (int column = 0; std::getline(fields, field, ','); ++column) {
        if (column >= 2) outcome.probabilities.push_back(std::stod(field));
      }
    }
    return outcome;
  }
  static double MaxDifference(const Outcome& a, const Outcome& b) {
    EXPECT_EQ(a.probabilities.size(), b.probabilities.size());
    double most = 0;
    for (size_t i = 0; i < std::min(a.probabilities.size(), b.probabilities.size()); ++i) {
      most = std::max(most, std::abs(a.probabilities[i] - b.probabilities[i]));
    }
    return most;
  }
  // The job's outcome alone on its own ps cluster (default container).
  Outcome Alone(const Job& job) {
    LocalCluster alone(2, 1, MakeTestDir(job.name + "-alone"));
    std::vector<std::string> flags = job.flags;
    flags.push_back("--run_dir=" + alone.dir());
    alone.StartAll(flags);
    for (const TaskExit& e : alone.WaitAll(seconds(120))) EXPECT_EQ(e.code, 0) << e.name;
    return OutcomeOf(alone);
  }
  // The shared ps cluster: its ps tasks only.
  void StartSharedPs() {
    shared_ = std::make_unique<LocalCluster>(2, 1, MakeTestDir("shared-ps"));
    checkpoints_ = shared_->dir() + "/checkpoints";
    for (int k = 0; k < 2; ++k) shared_->StartTask("ps", k, {"--checkpoint_dir=" + checkpoints_});
    for (const std::string& flag : shared_->ClusterFlags()) {
      if (flag.rfind("--ps_hosts=", 0) == 0) ps_hosts_ = flag;
    }
  }
  // Starts the job's chief (with `chief_flags`) and, unless `worker_flags`
  // is null, its worker (with those) on the shared ps, in container
  // `container`; returns the job's own cluster.
  std::unique_ptr<LocalCluster> StartOnSharedPs(
      const Job& job, const std::string& container,
      const std::vector<std::string>& chief_flags = {},
      const std::optional<std::vector<std::string>>& worker_flags = std::vector<std::string>()) {
    auto cluster = std::make_unique<LocalCluster>(2, 1, MakeTestDir(job.name));
    std::vector<std::string> flags = job.flags;
    flags.push_back(ps_hosts_);
    flags.push_back("--container=" + container);
    const auto with = [&flags](const std::vector<std::string>& more) {
      std::vector<std::string> all = flags;
      all.insert(all.end(), more.begin(), more.end());
      return all;
    };
    std::vector<std::string> chief = with(chief_flags);
    chief.push_back("--run_dir=" + cluster->dir());
    cluster->StartTask("chief", 0, chief);
    if (worker_flags) cluster->StartTask("worker", 0, with(*worker_flags));
    return cluster;
  }
  // The job ends as it does alone: the same accuracy, the same predictions
  // but for float rounding (a request naming its container is longer, which
  // moves where the received tensors sit in memory, so Eigen sums some of
  // them in another order).
  void ExpectFinished(LocalCluster& job, int steps, const Outcome& alone) {
    for (const TaskExit& e : job.WaitAll(seconds(120))) {
      EXPECT_EQ(e.code, 0) << e.name << "\n" << job.task("chief").Log();
    }
    const std::string log = job.task("chief").Log();
    EXPECT_EQ(ReportValue(log, "Global-Step: ").value_or(-1), steps) << log;
    const Outcome outcome = OutcomeOf(job);
    EXPECT_EQ(outcome.accuracy, alone.accuracy) << log;
    EXPECT_FALSE(outcome.probabilities.empty());
    EXPECT_LT(MaxDifference(outcome, alone), 1e-4);
  }
  // The shared ps serve on after every job: SIGTERM stops them cleanly.
  void StopSharedPs() {
    for (int k = 0; k < 2; ++k) {
      ChildProcess& ps = shared_->task("ps", k);
      EXPECT_TRUE(ps.Running()) << ps.Log();
      ps.Signal(SIGTERM);
      EXPECT_EQ(ps.Wait(seconds(60)), 0) << ps.Log();
    }
  }

  std::unique_ptr<LocalCluster> shared_;
  std::string ps_hosts_;
  std::string checkpoints_;  // the shared ps's --checkpoint_dir
};

// Job a async, job b sync (its step notices go to its own chief); both
// checkpoint into the one --checkpoint_dir, each in its container's folder.
TEST_F(ContainerTest, TwoJobsOnOnePsClusterTrainAsEachDoesAlone) {
  // The same model, so the same variable names, in both containers.
  Job a = MakeJob("job-a", "0.05", 300), b = MakeJob("job-b", "0.3", 300);
  b.flags.push_back("--mode=sync");
  const Outcome alone_a = Alone(a), alone_b = Alone(b);
  EXPECT_GT(MaxDifference(alone_a, alone_b), 0.01);  // so that mixing them up would show
  StartSharedPs();
  const std::vector<std::string> checkpoints = {"--checkpoint_dir=" + checkpoints_,
                                                "--checkpoint_every_steps=100"};
  auto job_a = StartOnSharedPs(a, "a", checkpoints);
  auto job_b = StartOnSharedPs(b, "b", checkpoints);
  ExpectFinished(*job_a, 300, alone_a);
  ExpectFinished(*job_b, 300, alone_b);
  // Each chief's shutdown released its own container only.
  ASSERT_TRUE(WaitForLogLine(shared_->task("ps", 0), "released container 'a'"))
      << shared_->task("ps", 0).Log();
  ASSERT_TRUE(WaitForLogLine(shared_->task("ps", 0), "released container 'b'"))
      << shared_->task("ps", 0).Log();
  for (const std::string container : {"a", "b"}) {
    // The final checkpoint: the chief's manifest beside both ps' parts.
    const std::string last = checkpoints_ + "/" + container + "/ckpt-000000000300";
    for (const std::string file : {"/manifest", "/ps-0.part", "/ps-1.part"}) {
      EXPECT_TRUE(std::filesystem::exists(last + file)) << last + file;
    }
  }
  StopSharedPs();
}

TEST_F(ContainerTest, AThirdJobsResetTouchesOnlyItsOwnContainer) {
  const Job a = MakeJob("reset-a", "0.05", 1500), b = MakeJob("reset-b", "0.3", 1500);
  const Outcome alone_a = Alone(a), alone_b = Alone(b);
  StartSharedPs();
  // Slowed (the numbers do not change) to outlast the jobs in container c.
  const std::vector<std::string> slow = {"--simulated_delay_ms=3"};
  auto job_a = StartOnSharedPs(a, "a", {}, slow);
  auto job_b = StartOnSharedPs(b, "b", {}, slow);

  // A job whose chief dies leaves its container c held.
  auto dead = StartOnSharedPs(MakeJob("dead", "0.1", 100000), "c");
  ASSERT_TRUE(WaitForLogLine(dead->task("chief"), "training opened")) << dead->task("chief").Log();
  dead->task("chief").Signal(SIGKILL);
  dead->task("worker").Signal(SIGKILL);

  // Another model is refused it, saying why.
  Job other = MakeJob("other-model", "0.1", 200);
  other.flags.push_back("--model=mlp_relu");
  auto refused = StartOnSharedPs(other, "c", {}, /*worker_flags=*/std::nullopt);
  EXPECT_EQ(refused->task("chief").Wait(seconds(60)), 1);
  EXPECT_NE(refused->task("chief").Log().find(
                "container 'c' holds another job's variables (another model: "),
            std::string::npos)
      << refused->task("chief").Log();

  // --reset_container takes it; a and b are still there, and go on.
  other.name = "reset-c";
  auto reset = StartOnSharedPs(other, "c", {"--reset_container"});
  for (const TaskExit& e : reset->WaitAll(seconds(120))) {
    EXPECT_EQ(e.code, 0) << e.name << "\n" << reset->task("chief").Log();
  }
  const std::string log = reset->task("chief").Log();
  EXPECT_NE(log.find("in container 'c', reset"), std::string::npos) << log;
  EXPECT_NE(log.find("ps:0 holds 3 containers: a ("), std::string::npos) << log;
  EXPECT_GT(ReportValue(log, "Test-Accuracy: ").value_or(0), 0.5) << log;
  ExpectFinished(*job_a, 1500, alone_a);
  ExpectFinished(*job_b, 1500, alone_b);
  StopSharedPs();
}

// A ps stopped while it still holds a container whose job died (nobody
// released it) drops it and exits cleanly.
TEST_F(ContainerTest, APsHoldingAnOrphanedContainerStopsCleanly) {
  StartSharedPs();
  auto dead = StartOnSharedPs(MakeJob("orphan", "0.1", 100000), "orphan");
  ASSERT_TRUE(WaitForLogLine(dead->task("chief"), "training opened")) << dead->task("chief").Log();
  dead->task("chief").Signal(SIGKILL);
  dead->task("worker").Signal(SIGKILL);
  StopSharedPs();
  EXPECT_NE(shared_->task("ps", 0).Log().find("dropping container 'orphan'"), std::string::npos);
}

}  // namespace
}  // namespace pst
