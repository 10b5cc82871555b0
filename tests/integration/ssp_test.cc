// Bounded staleness (--mode=ssp) with real processes: from the chief's clock
// log, no worker ever started a step more than s ahead of the slowest live
// one, for s = 0 and s = 2, with a straggler; s = 0 trains each worker for
// the steps sync mode gives it; a killed slow worker stops holding the others;
// a restarted chief keeps the bound.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::seconds;
constexpr int kWorkers = 3;
constexpr int kStraggler = 2;

struct Grant {
  int worker;
  int64_t clock;
  int64_t slowest;
};

class SspTest : public SyntheticDataTest {
 protected:
  static std::vector<std::string> Flags(std::vector<std::string> mode, int train_steps) {
    std::vector<std::string> flags = {"--data_dir=" + data_dir(),
                                      "--model=mlp",
                                      "--batch_size=50",
                                      "--learning_rate=0.1",
                                      "--train_steps=" + std::to_string(train_steps),
                                      "--eval_every_steps=0",
                                      "--rpc_timeout_ms=20000"};
    flags.insert(flags.end(), mode.begin(), mode.end());
    return flags;
  }

  // 2 ps, 3 workers, worker 2 sleeping `delay_ms` in every step; every task
  // must exit 0.
  static std::unique_ptr<LocalCluster> RunWithStraggler(const std::vector<std::string>& flags,
                                                        int delay_ms) {
    auto cluster = std::make_unique<LocalCluster>(2, kWorkers, TestDir());
    std::vector<std::string> all = flags;
    all.push_back("--run_dir=" + cluster->dir());
    for (int k = 0; k < 2; ++k) cluster->StartTask("ps", k, all);
    cluster->StartTask("chief", 0, all);
    for (int w = 0; w < kWorkers; ++w) {
      std::vector<std::string> mine = all;
      if (w == kStraggler) mine.push_back("--simulated_delay_ms=" + std::to_string(delay_ms));
      cluster->StartTask("worker", w, mine);
    }
    const auto exits = cluster->WaitAll(seconds(240));
    for (const TaskExit& e : exits) {
      EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << cluster->task("chief").Log();
    }
    return cluster;
  }

  // The grants of RUN_DIR/ssp_clocks.tsv, in order (docs/FORMATS.md).
  static std::vector<Grant> ReadClockLog(const LocalCluster& cluster) {
    const std::vector<std::string> lines = ReadLines(cluster.dir() + "/ssp_clocks.tsv");
    EXPECT_GE(lines.size(), 2u);
    if (lines.size() < 2) return {};
    EXPECT_EQ(lines[0], "# ssp_clocks 1");
    EXPECT_EQ(lines[1], "worker\tclock\tslowest");
    std::vector<Grant> grants;
    for (size_t i = 2; i < lines.size(); ++i) {
      std::istringstream in(lines[i]);
      Grant g{};
      EXPECT_TRUE(in >> g.worker >> g.clock >> g.slowest) << lines[i];
      grants.push_back(g);
    }
    return grants;
  }

  // Checks the bound s on the log, two ways: each grant's own record
  // (clock - slowest <= s), and from the order of the grants alone: when a
  // worker is let go at clock c, every other worker that is let go again
  // later (so it was live meanwhile) had completed at most one step more
  // than it was last let go for, so c - (its last clock + 1) <= s. Returns
  // the largest clock - slowest seen.
  static int64_t ExpectBoundHeld(const std::vector<Grant>& grants, int64_t s) {
    std::map<int, size_t> last_line;  // worker -> index of its last grant
    for (size_t i = 0; i < grants.size(); ++i) last_line[grants[i].worker] = i;
    std::map<int, int64_t> clock_so_far;  // worker -> clock of its latest grant
    int64_t widest = 0;
    for (size_t i = 0; i < grants.size(); ++i) {
      const Grant& g = grants[i];
      EXPECT_LE(g.slowest, g.clock) << "line " << i + 3;
      EXPECT_LE(g.clock - g.slowest, s) << "line " << i + 3;
      widest = std::max(widest, g.clock - g.slowest);
      for (const auto& [other, clock] : clock_so_far) {
        if (other == g.worker || last_line[other] < i) continue;
        EXPECT_LE(g.clock - (clock + 1), s)
            << "line " << i + 3 << ": worker:" << g.worker << " let go at " << g.clock
            << " while worker:" << other << " had completed at most " << clock + 1;
      }
      clock_so_far[g.worker] = g.clock;
    }
    return widest;
  }

  // "worker:I stops after N local steps", for each worker.
  static std::vector<int64_t> LocalSteps(LocalCluster& cluster) {
    std::vector<int64_t> steps;
    for (int w = 0; w < kWorkers; ++w) {
      const std::string log = cluster.task("worker", w).Log();
      steps.push_back(static_cast<int64_t>(ReportValue(log, "stops after ").value_or(-1)));
    }
    return steps;
  }
};

TEST_F(SspTest, BoundTwoHoldsAgainstAStraggler) {
  auto cluster = RunWithStraggler(Flags({"--mode=ssp", "--staleness_bound=2"}, 90), 30);
  const std::vector<Grant> grants = ReadClockLog(*cluster);
  ASSERT_GE(grants.size(), 90u);
  // The fast workers did run ahead, as far as the bound lets them.
  EXPECT_EQ(ExpectBoundHeld(grants, 2), 2);
}

TEST_F(SspTest, BoundZeroIsLockStepAndGivesSyncsStepCounts) {
  constexpr int kSyncSteps = 20;
  auto ssp =
      RunWithStraggler(Flags({"--mode=ssp", "--staleness_bound=0"}, kWorkers * kSyncSteps), 30);
  EXPECT_EQ(ExpectBoundHeld(ReadClockLog(*ssp), 0), 0);
  const std::vector<int64_t> ssp_steps = LocalSteps(*ssp);
  ssp.reset();  // the sync run reuses the test's folder
  // A sync step is one push of each worker; an ssp (async) global step is
  // one push.
  auto sync = RunWithStraggler(Flags({"--mode=sync", "--replicas_to_aggregate=3"}, kSyncSteps), 30);
  const std::vector<int64_t> each(kWorkers, kSyncSteps);
  EXPECT_EQ(LocalSteps(*sync), each);
  EXPECT_EQ(ssp_steps, each);
}

// The slowest worker is killed: once the chief declares it dead the others
// are no longer held by it, run past its clock and finish.
TEST_F(SspTest, AKilledSlowWorkerReleasesTheOthers) {
  auto cluster = std::make_unique<LocalCluster>(2, kWorkers, TestDir());
  std::vector<std::string> flags = Flags({"--mode=ssp", "--staleness_bound=1"}, 300);
  flags.push_back("--run_dir=" + cluster->dir());
  flags.push_back("--heartbeat_timeout_ms=1000");
  // Held for good by the dead worker, the others would give up after this.
  flags.push_back("--join_timeout_ms=30000");
  flags.push_back("--log_every_steps=10");
  for (int k = 0; k < 2; ++k) cluster->StartTask("ps", k, flags);
  cluster->StartTask("chief", 0, flags);
  for (int w = 0; w < kWorkers; ++w) {
    std::vector<std::string> mine = flags;
    if (w == kStraggler) mine.push_back("--simulated_delay_ms=50");
    cluster->StartTask("worker", w, mine);
  }
  ChildProcess& chief = cluster->task("chief");
  for (int i = 0; i < 2000 && ReportValue(chief.Log(), "Step: ").value_or(0) < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(cluster->task("worker", kStraggler).Running()) << "the run ended before the kill";
  cluster->task("worker", kStraggler).Signal(SIGKILL);
  EXPECT_EQ(chief.Wait(seconds(240)), 0) << chief.Log();
  EXPECT_NE(chief.Log().find("worker:2 declared dead"), std::string::npos) << chief.Log();
  for (int w = 0; w < kStraggler; ++w) EXPECT_EQ(cluster->task("worker", w).Wait(seconds(60)), 0);
  for (int k : {0, 1}) EXPECT_EQ(cluster->task("ps", k).Wait(seconds(60)), 0);
  const std::vector<Grant> grants = ReadClockLog(*cluster);
  int64_t dead_at = 0, furthest = 0;
  for (const Grant& g : grants) {
    if (g.worker == kStraggler) dead_at = std::max(dead_at, g.clock + 1);
    furthest = std::max(furthest, g.clock);
    EXPECT_LE(g.clock - g.slowest, 1);
  }
  // Held by the dead worker, nobody would have started a step past
  // dead_at + 1.
  EXPECT_GT(furthest, dead_at + 1);
}

// The chief is killed mid-run and started again (keeping its cluster id):
// the workers go on counting their own clocks, the new chief learns them
// from their requests (every worker counts from 0 until it asks), and the
// bound holds over its grants (its clock log, like metrics.jsonl, is
// written afresh).
TEST_F(SspTest, ARestartedChiefKeepsTheBound) {
  auto cluster = std::make_unique<LocalCluster>(2, kWorkers, TestDir());
  std::vector<std::string> flags = Flags({"--mode=ssp", "--staleness_bound=1"}, 240);
  flags.push_back("--run_dir=" + cluster->dir());
  flags.push_back("--checkpoint_dir=" + cluster->dir() + "/ckpt");
  flags.push_back("--log_every_steps=10");
  for (int k = 0; k < 2; ++k) cluster->StartTask("ps", k, flags);
  cluster->StartTask("chief", 0, flags);
  for (int w = 0; w < kWorkers; ++w) {
    std::vector<std::string> mine = flags;
    if (w == kStraggler) mine.push_back("--simulated_delay_ms=20");
    cluster->StartTask("worker", w, mine);
  }
  for (int i = 0; i < 2000 && ReportValue(cluster->task("chief").Log(), "Step: ").value_or(0) < 30;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  cluster->task("chief").Signal(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ChildProcess& chief = cluster->StartTask("chief", 0, flags);
  const auto exits = cluster->WaitAll(seconds(240));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << chief.Log();
  EXPECT_NE(chief.Log().find("keeping cluster id"), std::string::npos) << chief.Log();
  // The new chief's grants, from the clocks the workers had reached.
  const std::vector<Grant> grants = ReadClockLog(*cluster);
  ASSERT_FALSE(grants.empty());
  EXPECT_GT(grants.front().clock, 0);
  ExpectBoundHeld(grants, 1);
}

TEST(SspFlagsTest, ANegativeBoundExitsTwo) {
  LocalCluster cluster(1, 1, MakeTestDir("bad-staleness-bound"));
  ChildProcess& chief = cluster.StartTask(
      "chief", 0, {"--mode=ssp", "--staleness_bound=-1", "--data_dir=/nonexistent"});
  EXPECT_EQ(chief.Wait(seconds(30)), 2);
  EXPECT_NE(chief.Log().find("--staleness_bound=-1 must be >= 0"), std::string::npos)
      << chief.Log();
}

TEST(SspFlagsTest, ABoundWithoutSspExitsTwo) {
  LocalCluster cluster(1, 1, MakeTestDir("bound-without-ssp"));
  ChildProcess& chief = cluster.StartTask(
      "chief", 0, {"--mode=async", "--staleness_bound=2", "--data_dir=/nonexistent"});
  EXPECT_EQ(chief.Wait(seconds(30)), 2);
  EXPECT_NE(chief.Log().find("--staleness_bound applies only with --mode=ssp"), std::string::npos)
      << chief.Log();
}

TEST(SspFlagsTest, AWarmUpExitsTwo) {
  LocalCluster cluster(1, 1, MakeTestDir("ssp-warmup"));
  ChildProcess& worker =
      cluster.StartTask("worker", 0, {"--mode=ssp", "--warmup_steps=5", "--data_dir=/nonexistent"});
  EXPECT_EQ(worker.Wait(seconds(30)), 2);
  EXPECT_NE(worker.Log().find("--warmup_steps does not go with --mode=ssp"), std::string::npos)
      << worker.Log();
}

}  // namespace
}  // namespace pst
