// The ps, worker and chief executables with --ps_replicas=2 (3 ps, 3
// workers): a ps SIGKILLed in the middle of training (no --checkpoint_dir
// at all), or the chief SIGKILLed and restarted, costs no rollback, async
// or sync; the global step never moves backwards and the run finishes.
#include <signal.h>

#include <regex>
#include <thread>

#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kTrainSteps = 600;

class ReplicatedClusterTest : public SyntheticDataTest,
                              public ::testing::WithParamInterface<std::string> {
 protected:
  static std::vector<std::string> Flags() {
    return {"--data_dir=" + data_dir(),
            "--model=mlp",
            "--batch_size=50",
            "--mode=" + GetParam(),
            "--train_steps=" + std::to_string(kTrainSteps),
            "--eval_every_steps=0",
            "--log_every_steps=20",
            "--simulated_delay_ms=4",
            "--ps_replicas=2",
            "--rpc_timeout_ms=5000",
            "--heartbeat_timeout_ms=3000"};
  }
  static void WaitForStep(ChildProcess& chief, int step) {
    for (int i = 0; i < 3000 && ReportValue(chief.Log(), "Step: ").value_or(0) < step; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    ASSERT_GE(ReportValue(chief.Log(), "Step: ").value_or(0), step) << chief.Log();
  }
  // Flags() with checkpoints, which a restarted chief could roll back to.
  static std::vector<std::string> FlagsWithCheckpoints(const std::string& dir) {
    std::vector<std::string> flags = Flags();
    flags.insert(flags.end(), {"--checkpoint_dir=" + dir + "/checkpoints",
                               "--checkpoint_every_steps=100", "--join_timeout_ms=60000"});
    return flags;
  }
  // Every task of `cluster` exits 0.
  static void ExpectEveryExitZero(LocalCluster& cluster, ChildProcess& chief) {
    const auto exits = cluster.WaitAll(seconds(240));
    for (const TaskExit& e : exits) {
      EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << chief.Log();
    }
  }
  // The chiefs of `log` restored nothing, their global step never went back,
  // and the run reached --train_steps.
  static void ExpectNoRollback(const std::string& log) {
    EXPECT_EQ(log.find("restored checkpoint"), std::string::npos) << log;
    ExpectStepsNeverGoBack(log);
    EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), kTrainSteps) << log;
  }
  static void ExpectStepsNeverGoBack(const std::string& log) {
    const std::vector<int> steps = LoggedSteps(log);
    ASSERT_FALSE(steps.empty()) << log;
    for (size_t i = 1; i < steps.size(); ++i) {
      EXPECT_GE(steps[i], steps[i - 1]) << "the global step moved backwards:\n" << log;
    }
  }
  // The global steps of the chief's "Step: N" lines, in order.
  static std::vector<int> LoggedSteps(const std::string& log) {
    std::vector<int> steps;
    const std::regex step_line("Step: (\\d+)");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), step_line);
         it != std::sregex_iterator(); ++it) {
      steps.push_back(std::stoi((*it)[1].str()));
    }
    return steps;
  }
};

TEST_P(ReplicatedClusterTest, AKilledPsCostsNoRollback) {
  LocalCluster cluster(3, 3, TestDir());
  cluster.StartAll(Flags());
  ChildProcess& chief = cluster.task("chief");
  WaitForStep(chief, 150);
  cluster.task("ps", 1).Signal(SIGKILL);
  const auto exits = cluster.WaitAll(seconds(240));
  for (const TaskExit& e : exits) {
    if (e.name == "ps-1") continue;  // killed
    EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << chief.Log();
  }
  const std::string log = chief.Log();
  EXPECT_NE(log.find("ps:1 lost"), std::string::npos) << log;
  EXPECT_NE(log.find("shard 1 epoch 2: primary ps:2"), std::string::npos) << log;
  EXPECT_EQ(log.find("training resumes at global step"), std::string::npos) << log;
  ExpectStepsNeverGoBack(log);
  const double final_step = ReportValue(log, "Global-Step: ").value_or(0);
  EXPECT_GE(final_step, kTrainSteps) << log;
  // Sync counts each step once; async, each of the 3 workers' last pushes
  // may land after: it learns the global step from the push two before
  // (PushLedger::kPushesInFlight in flight under --ps_replicas).
  EXPECT_LE(final_step, GetParam() == "sync" ? kTrainSteps : kTrainSteps + 3 * 2) << log;
  EXPECT_GT(ReportValue(log, "Test-Accuracy: ").value_or(0), 0.5) << log;
}

// The chief SIGKILLed and started again (with --checkpoint_dir, which keeps
// the cluster id and holds a checkpoint it could roll back to): it takes the
// chains the ps hold over and carries on from their step, restoring nothing.
TEST_P(ReplicatedClusterTest, AKilledChiefTakesTheRunningChainsOverWithoutARollback) {
  LocalCluster cluster(3, 3, TestDir());
  const std::vector<std::string> flags = FlagsWithCheckpoints(cluster.dir());
  cluster.StartAll(flags);
  WaitForStep(cluster.task("chief"), 150);
  cluster.task("chief").Signal(SIGKILL);
  std::this_thread::sleep_for(milliseconds(500));
  ChildProcess& chief = cluster.StartTask("chief", 0, flags);
  ExpectEveryExitZero(cluster, chief);
  const std::string log = chief.Log();  // both chiefs': the file goes on
  EXPECT_NE(log.find("as the running ps hold them"), std::string::npos) << log;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      log, m, std::regex("carrying on from global step (\\d+) without restoring a checkpoint")))
      << log;
  EXPECT_GE(std::stoi(m[1].str()), 150) << log;
  ExpectNoRollback(log);
  EXPECT_LE(ReportValue(log, "Global-Step: ").value_or(0),
            GetParam() == "sync" ? kTrainSteps : kTrainSteps + 3 * 2)
      << log;
}

// A ps and the chief SIGKILLed at once: the chief had no time to promote the
// lost primary's backup, so the new chief does, then carries on without a
// rollback. The ps, back empty (as run_local.sh --restart_failed restarts
// it), rejoins its chains as a backup.
TEST_P(ReplicatedClusterTest, AChiefKilledWithAPsPromotesTheBackupItself) {
  LocalCluster cluster(3, 3, TestDir());
  const std::vector<std::string> flags = FlagsWithCheckpoints(cluster.dir());
  cluster.StartAll(flags);
  WaitForStep(cluster.task("chief"), 150);
  cluster.task("ps", 1).Signal(SIGKILL);
  cluster.task("chief").Signal(SIGKILL);
  std::this_thread::sleep_for(milliseconds(500));
  cluster.StartTask("ps", 1, flags);  // empty: the chief waits for every ps
  ChildProcess& chief = cluster.StartTask("chief", 0, flags);
  ExpectEveryExitZero(cluster, chief);
  const std::string log = chief.Log();
  EXPECT_NE(log.find("a chain changed as this chief takes over: shard 1 epoch 2: primary ps:2"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("ps:1 is back"), std::string::npos) << log;
  ExpectNoRollback(log);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReplicatedClusterTest, ::testing::Values("async", "sync"));

}  // namespace
}  // namespace pst
