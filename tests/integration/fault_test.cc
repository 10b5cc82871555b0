// Processes that die mid-run: a ps killed, declared dead and restarted (the
// cluster rolls back to its last checkpoint and finishes), a ps that only
// stalls (nothing rolls back), a worker killed and
// restarted in sync mode without a spare worker, the chief killed and
// restarted (once, and five times for longer than a worker's token re-send
// interval), carrying on from the running shards without a rollback.
#include <signal.h>

#include <functional>
#include <iostream>
#include <memory>
#include <regex>
#include <thread>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"
#include "transport/shm_options.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// No shared-memory segment made by process `pid` is left in /dev/shm
// (docs/SHARED_MEMORY.md).
void ExpectNoSegmentOf(pid_t pid) {
  EXPECT_EQ(SharedMemoryNamesOf(pid), std::vector<std::string>{});
}

class FaultTest : public SyntheticDataTest {
 protected:
  std::vector<std::string> Flags(const std::string& mode, int train_steps) {
    // Fresh, so that --gtest_repeat does not restore the last run's model.
    train_steps_ = train_steps;
    checkpoints_ = MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name() +
                               std::string("-checkpoints"));
    return {"--data_dir=" + data_dir(),
            "--model=mlp",
            "--batch_size=50",
            "--mode=" + mode,
            "--train_steps=" + std::to_string(train_steps),
            "--eval_every_steps=0",
            "--log_every_steps=20",
            "--simulated_delay_ms=4",
            "--checkpoint_dir=" + checkpoints_,
            "--checkpoint_every_steps=50",
            "--rpc_timeout_ms=2000",
            "--heartbeat_timeout_ms=3000"};
  }
  // Waits until the chief's report lines pass `step`.
  static void WaitForStep(ChildProcess& chief, int step) {
    for (int i = 0; i < 3000 && ReportValue(chief.Log(), "Step: ").value_or(0) < step; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    ASSERT_GE(ReportValue(chief.Log(), "Step: ").value_or(0), step) << chief.Log();
  }
  // Starts an async run (`num_ps` ps, 2 workers; `extra` flags and --run_dir
  // the cluster's folder, all in *flags) and does `fault` to it once the
  // chief's reports pass `after_step`. The fault must come before the chief
  // sees --train_steps, and a chief that stalls while the workers train (a
  // checkpoint's fsync on a loaded disk) can see the end first: then the run
  // starts again, three times as long. Null after three misses.
  std::unique_ptr<LocalCluster> FaultBeforeTheEnd(int num_ps, int train_steps, int after_step,
                                                  const std::vector<std::string>& extra,
                                                  const std::function<void(LocalCluster&)>& fault,
                                                  std::vector<std::string>* flags) {
    for (int attempt = 0; attempt < 3; ++attempt, train_steps *= 3) {
      auto cluster = std::make_unique<LocalCluster>(num_ps, 2, TestDir());
      *flags = Flags("async", train_steps);
      flags->insert(flags->end(), extra.begin(), extra.end());
      flags->push_back("--run_dir=" + cluster->dir());
      cluster->StartAll(*flags);
      WaitForStep(cluster->task("chief"), after_step);
      fault(*cluster);
      // Read after the fault: the chief shows the end's progress line as
      // soon as it reads the step.
      if (ReportValue(cluster->task("chief").Log(), "Progress: step ").value_or(0) < train_steps) {
        return cluster;
      }
      std::cerr << "the chief saw step " << train_steps << " before the fault: again\n";
    }
    ADD_FAILURE() << "the chief saw the end before the fault, three times";
    return nullptr;
  }
  static void HoldTheChief(LocalCluster& cluster) { cluster.task("chief").Signal(SIGSTOP); }
  static void KillTheChief(LocalCluster& cluster) { cluster.task("chief").Signal(SIGKILL); }
  // Async workers hold at --train_steps until the chief closes the run.
  static void WaitUntilTheWorkersHold(LocalCluster& cluster) {
    for (int w = 0; w < 2; ++w) {
      ChildProcess& worker = cluster.task("worker", w);
      ASSERT_TRUE(WaitForLogLine(worker, "waiting for the chief to close the run")) << worker.Log();
    }
  }
  static void ExpectAllExitZero(LocalCluster& cluster) {
    const auto exits = cluster.WaitAll(seconds(240));
    for (const TaskExit& e : exits) {
      EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << cluster.task("chief").Log();
    }
  }
  // Kills the chief after `kill_after_step` and finishes the run with a
  // restarted one (FinishWithARestartedChief).
  std::string RestartChief(LocalCluster& cluster, const std::vector<std::string>& flags,
                           int kill_after_step) {
    WaitForStep(cluster.task("chief"), kill_after_step);
    KillTheChief(cluster);
    return FinishWithARestartedChief(cluster, flags);
  }
  // Restarts the killed chief with the same --checkpoint_dir: it keeps the
  // cluster id and the workers wait for it instead of failing. Returns the
  // restarted chief's log.
  std::string FinishWithARestartedChief(LocalCluster& cluster,
                                        const std::vector<std::string>& flags) {
    std::this_thread::sleep_for(milliseconds(500));
    ChildProcess& chief = cluster.StartTask("chief", 0, flags);
    ExpectAllExitZero(cluster);
    const std::string log = chief.Log();
    EXPECT_NE(log.find("keeping cluster id"), std::string::npos) << log;
    EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), train_steps_) << log;
    EXPECT_GT(ReportValue(log, "Test-Accuracy: ").value_or(0), 0.5) << log;
    return log;
  }
  std::string checkpoints_;
  int train_steps_ = 0;  // of the last Flags()
};

TEST_F(FaultTest, KilledPsIsRestartedAndTrainingResumesFromTheCheckpoint) {
  std::vector<std::string> flags;
  const std::unique_ptr<LocalCluster> run = FaultBeforeTheEnd(
      2, 500, 180, {}, [](LocalCluster& c) { c.task("ps", 1).Signal(SIGKILL); }, &flags);
  ASSERT_TRUE(run != nullptr && !HasFailure());
  LocalCluster& cluster = *run;
  ChildProcess& chief = cluster.task("chief");
  // Silent for longer than --heartbeat_timeout_ms: declared dead.
  for (int i = 0; i < 1000 && chief.Log().find("ps:1 declared dead") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  cluster.StartTask("ps", 1, flags);  // what run_local.sh --restart_failed does
  ExpectAllExitZero(cluster);
  const std::string log = chief.Log();
  EXPECT_NE(log.find("ps:1 declared dead: silent for more than --heartbeat_timeout_ms=3000"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("ps:1 is alive again"), std::string::npos) << log;
  // The metrics say it too: one death, both ps alive at the end.
  const auto metrics = ReadLines(cluster.dir() + "/metrics.jsonl");
  ASSERT_FALSE(metrics.empty());
  EXPECT_NE(metrics.back().find("\"task_deaths\": 1,"), std::string::npos) << metrics.back();
  EXPECT_NE(metrics.back().find("\"live_ps\": 2,"), std::string::npos) << metrics.back();
  std::smatch m;
  // Noticed by the probe ("ps:1 is down") or by a failed request to it.
  EXPECT_TRUE(std::regex_search(log, m, std::regex("pausing training: [^\n]*ps:1"))) << log;
  // The restored step is the checkpoint's, and training resumes from it.
  ASSERT_TRUE(std::regex_search(log, m, std::regex("ckpt-0*(\\d+) at step (\\d+)"))) << log;
  EXPECT_EQ(m[1].str(), m[2].str());
  EXPECT_GE(std::stoi(m[2].str()), 50);
  EXPECT_NE(log.find("training resumes at global step " + m[2].str()), std::string::npos);
  // Async: each worker's last push may land after the 500th.
  EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), train_steps_);
  EXPECT_LE(ReportValue(log, "Global-Step: ").value_or(0), train_steps_ + 2);
}

// A ps stopped for longer than a probe's patience looks down to the chief,
// yet it kept its variables: training goes on where it is, instead of going
// back to the last checkpoint (or, without one, to step 0).
TEST_F(FaultTest, APsThatStallsPastTheProbesPatienceKeepsItsTraining) {
  std::vector<std::string> flags;
  const std::unique_ptr<LocalCluster> run = FaultBeforeTheEnd(
      1, 400, 120, {}, [](LocalCluster& c) { c.task("ps", 0).Signal(SIGSTOP); }, &flags);
  ASSERT_TRUE(run != nullptr && !HasFailure());
  LocalCluster& cluster = *run;
  ChildProcess& chief = cluster.task("chief");
  for (int i = 0; i < 250 && chief.Log().find("pausing training") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  cluster.task("ps", 0).Signal(SIGCONT);
  ExpectAllExitZero(cluster);
  const std::string log = chief.Log();
  // Noticed by the probe ("pausing training: ps:0 ...") or, under load, by
  // a request that found it silent first ("pausing training: Unavailable:
  // ps:0 is down: ..." after a checkpoint's deadline).
  std::smatch m;
  EXPECT_TRUE(std::regex_search(log, m, std::regex("pausing training: [^\n]*ps:0"))) << log;
  EXPECT_NE(log.find("nothing was lost: training goes on at global step"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("training resumes at global step"), std::string::npos) << log;
  EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), train_steps_);
  EXPECT_LE(ReportValue(log, "Global-Step: ").value_or(0), train_steps_ + 2);
}

TEST_F(FaultTest, KilledChiefIsRestartedAndAsyncTrainingResumes) {
  std::vector<std::string> flags;
  const std::unique_ptr<LocalCluster> run =
      FaultBeforeTheEnd(1, 400, 150, {}, KillTheChief, &flags);
  ASSERT_TRUE(run != nullptr && !HasFailure());
  const std::string log = FinishWithARestartedChief(*run, flags);
  // The ps kept their variables and the workers kept training: no rollback.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      log, m, std::regex("carrying on from global step (\\d+) without restoring")))
      << log;
  EXPECT_GT(std::stoi(m[1].str()), 150);
  EXPECT_EQ(log.find("restored checkpoint"), std::string::npos) << log;
}

// The workers train to the end while the chief is down, one of them still
// in its last step when the chief comes back. The chief finds training over;
// it must wait for that worker to speak and leave rather than stop the ps
// under it (the worker then waited --join_timeout_ms for a cluster that was
// gone, and failed: a flake of the test above). Worker 1 sleeps 1 s in each
// step, so it is most likely inside one when the chief is back (else the
// test passes either way).
TEST_F(FaultTest, ARestartedChiefThatFindsTrainingOverWaitsForAWorkerStillInItsStep) {
  LocalCluster cluster(1, 2, TestDir());
  auto flags = Flags("async", 300);
  flags.push_back("--join_timeout_ms=5000");
  cluster.StartTask("ps", 0, flags);
  cluster.StartTask("chief", 0, flags);
  cluster.StartTask("worker", 0, flags);
  auto slow = flags;
  slow.push_back("--simulated_delay_ms=1000");
  cluster.StartTask("worker", 1, slow);
  WaitForStep(cluster.task("chief"), 100);
  cluster.task("chief").Signal(SIGKILL);
  ASSERT_TRUE(WaitForLogLine(cluster.task("worker", 0), "stops after"))
      << cluster.task("worker", 0).Log();
  ChildProcess& chief = cluster.StartTask("chief", 0, flags);
  ExpectAllExitZero(cluster);
  EXPECT_NE(chief.Log().find("carrying on from global step"), std::string::npos) << chief.Log();
  EXPECT_EQ(cluster.task("worker", 1).Log().find("waiting for the cluster to recover"),
            std::string::npos)
      << cluster.task("worker", 1).Log();
}

TEST_F(FaultTest, KilledChiefIsRestartedAndSyncTrainingResumes) {
  LocalCluster cluster(1, 2, TestDir());
  auto flags = Flags("sync", 300);
  flags.push_back("--replicas_to_aggregate=2");
  cluster.StartAll(flags);
  const std::string log = RestartChief(cluster, flags, 120);
  // Every shard is at the step the killed chief last opened: the new one
  // carries on from there without a rollback, and the workers that joined
  // the killed chief count as live for the new one.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      log, m,
      std::regex("every shard at sync step (\\d+): carrying on from global step (\\d+) without "
                 "restoring")))
      << log;
  EXPECT_EQ(m[1].str(), m[2].str());
  EXPECT_GE(std::stoi(m[2].str()), 120);
  EXPECT_EQ(log.find("restored checkpoint"), std::string::npos) << log;
  EXPECT_EQ(ReportValue(log, "Global-Step: ").value_or(0), train_steps_) << log;
  EXPECT_NE(log.find("worker:0 carries on from before this chief started"), std::string::npos);
  EXPECT_NE(log.find("worker:1 carries on from before this chief started"), std::string::npos);
  EXPECT_EQ(log.find("waiting: "), std::string::npos) << log;
}

// A chief down for longer than a worker's token re-send interval finds
// several token requests of each worker queued. Whichever it answers, every
// worker gets its token: training finishes without restarting any worker
// (this test restarts none, and every task must exit 0).
TEST_F(FaultTest, SyncTrainingSurvivesFiveLongChiefOutages) {
  constexpr int kTrainSteps = 400;
  LocalCluster cluster(2, 3, TestDir());
  auto flags = Flags("sync", kTrainSteps);
  // No spare: one worker left waiting stalls the cluster.
  flags.push_back("--replicas_to_aggregate=3");
  cluster.StartAll(flags);
  for (int kill = 1; kill <= 5; ++kill) {
    WaitForStep(cluster.task("chief"), 60 * kill);
    if (HasFatalFailure()) return;  // stalled
    cluster.task("chief").Signal(SIGKILL);
    std::this_thread::sleep_for(seconds(3));
    ChildProcess& chief = cluster.StartTask("chief", 0, flags);
    // The shards agree on their step: no rollback, the step never goes back.
    // The log file goes on across restarts: this chief's line is the kill-th.
    const std::regex carrying_on("carrying on from global step (\\d+)");
    std::vector<int> steps;
    std::string log;
    for (int i = 0; i < 6000 && static_cast<int>(steps.size()) < kill; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
      log = chief.Log();
      steps.clear();
      for (auto it = std::sregex_iterator(log.begin(), log.end(), carrying_on);
           it != std::sregex_iterator(); ++it) {
        steps.push_back(std::stoi((*it)[1].str()));
      }
    }
    ASSERT_EQ(static_cast<int>(steps.size()), kill) << log;
    const int step = steps.back();
    EXPECT_GE(step, 60 * kill) << log;
  }
  ExpectAllExitZero(cluster);
  const std::string log = cluster.task("chief").Log();
  EXPECT_NE(log.find("keeping cluster id"), std::string::npos) << log;
  EXPECT_EQ(ReportValue(log, "Global-Step: ").value_or(0), kTrainSteps) << log;
}

TEST_F(FaultTest, SyncWithoutSpareFinishesAfterTheKilledWorkerRestarts) {
  LocalCluster cluster(1, 2, TestDir());
  auto flags = Flags("sync", 300);
  flags.push_back("--replicas_to_aggregate=2");
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  WaitForStep(chief, 60);
  const pid_t killed = cluster.task("worker", 1).pid();
  if (DefaultShmOptions().mode == ShmMode::kAuto) {  // not under PST_SHM=off
    EXPECT_NE(cluster.task("worker", 1).Log().find("go through shared memory"), std::string::npos);
  }
  cluster.task("worker", 1).Signal(SIGKILL);
  // Longer than --heartbeat_timeout_ms: the worker is declared dead and the
  // chief says it waits for a second live worker.
  for (int i = 0; i < 1000 && chief.Log().find("waiting: 1 live workers") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_NE(chief.Log().find("worker:1 declared dead"), std::string::npos) << chief.Log();
  EXPECT_NE(chief.Log().find("waiting: 1 live workers, each step needs 2"), std::string::npos);
  cluster.StartTask("worker", 1, flags);
  ExpectAllExitZero(cluster);
  EXPECT_EQ(ReportValue(chief.Log(), "Global-Step: ").value_or(0), 300) << chief.Log();
  ExpectNoSegmentOf(killed);  // a SIGKILL leaves no shared memory behind
}

// A chief stopped for longer than --heartbeat_timeout_ms finds every
// heartbeat sent meanwhile still queued when it wakes: no task is dead, and
// none is declared dead.
TEST_F(FaultTest, AChiefHeldPastTheHeartbeatTimeoutDeclaresNoOneDead) {
  std::vector<std::string> flags;
  const std::unique_ptr<LocalCluster> held =
      FaultBeforeTheEnd(1, 300, 60, {}, HoldTheChief, &flags);
  ASSERT_TRUE(held != nullptr && !HasFailure());
  LocalCluster& cluster = *held;
  ChildProcess& chief = cluster.task("chief");
  std::this_thread::sleep_for(milliseconds(4500));  // past the 3000 ms timeout
  chief.Signal(SIGCONT);
  ExpectAllExitZero(cluster);
  const std::string log = chief.Log();
  EXPECT_EQ(log.find("declared dead"), std::string::npos) << log;
  EXPECT_NE(log.find("silences count from now"), std::string::npos) << log;
  const auto metrics = ReadLines(cluster.dir() + "/metrics.jsonl");
  ASSERT_FALSE(metrics.empty());
  EXPECT_NE(metrics.back().find("\"task_deaths\": 0,"), std::string::npos) << metrics.back();
}

// Async workers hold at --train_steps until the chief closes the run
// (WorkerTask::HoldUntilClosed). A ps lost after they reached it (here while
// the chief is held, so that it cannot finish first) rolls the run back to
// its last checkpoint, below --train_steps: the held workers train the lost
// steps again and the run ends well.
TEST_F(FaultTest, APsLostAfterAsyncWorkersReachedTheEndIsRecoveredByTheHeldWorkers) {
  std::vector<std::string> flags;
  const std::unique_ptr<LocalCluster> held =
      FaultBeforeTheEnd(1, 300, 60, {}, HoldTheChief, &flags);
  ASSERT_TRUE(held != nullptr && !HasFailure());
  LocalCluster& cluster = *held;
  WaitUntilTheWorkersHold(cluster);
  if (HasFatalFailure()) return;
  ChildProcess& chief = cluster.task("chief");
  cluster.task("ps", 0).Signal(SIGKILL);
  cluster.task("ps", 0).Wait(seconds(10));
  cluster.StartTask("ps", 0, flags);  // back empty, as run_local.sh --restart_failed brings it
  chief.Signal(SIGCONT);
  ExpectAllExitZero(cluster);
  const std::string log = chief.Log();
  EXPECT_NE(log.find("restored checkpoint"), std::string::npos) << log;
  EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), train_steps_) << log;
  int trained_on = 0;
  for (int w = 0; w < 2; ++w) {
    trained_on += cluster.task("worker", w).Log().find("training on") != std::string::npos;
  }
  EXPECT_GT(trained_on, 0) << "no held worker trained the rolled-back steps";
}

// The same loss with the workers gone too (killed while held): training is
// open with no one to train, and the chief stops with an error that says why
// once that has lasted --join_timeout_ms, instead of waiting for ever.
TEST_F(FaultTest, APsLostAfterTheAsyncWorkersDiedEndsTheRunWithAClearError) {
  std::vector<std::string> flags;
  const std::unique_ptr<LocalCluster> held =
      FaultBeforeTheEnd(1, 300, 60, {"--join_timeout_ms=5000"}, HoldTheChief, &flags);
  ASSERT_TRUE(held != nullptr && !HasFailure());
  LocalCluster& cluster = *held;
  WaitUntilTheWorkersHold(cluster);
  if (HasFatalFailure()) return;
  ChildProcess& chief = cluster.task("chief");
  for (int w = 0; w < 2; ++w) {
    cluster.task("worker", w).Signal(SIGKILL);
    cluster.task("worker", w).Wait(seconds(10));
  }
  cluster.task("ps", 0).Signal(SIGKILL);
  cluster.task("ps", 0).Wait(seconds(10));
  ChildProcess& restarted = cluster.StartTask("ps", 0, flags);
  chief.Signal(SIGCONT);
  const std::optional<int> exit = chief.Wait(seconds(120));
  ASSERT_TRUE(exit.has_value()) << "the chief still waits\n" << chief.Log();
  EXPECT_NE(*exit, 0) << chief.Log();
  const std::string log = chief.Log();
  EXPECT_NE(log.find("but no worker has been alive for 5000 ms (--join_timeout_ms)"),
            std::string::npos)
      << log;
  EXPECT_EQ(restarted.Wait(seconds(30)), 0) << "the ps was not stopped\n" << restarted.Log();
}

// Sync with every worker needed: a ps stalled for longer than
// --rpc_timeout_ms makes the workers' pulls fail after they took their
// tokens; once the ps answers again (it kept its variables) they take the
// current step again, so the step completes instead of waiting for ever for
// gradients no one sends. The chief is held first, so that every worker sits
// waiting for its next token when the ps stops, and pulls from the stopped ps
// as soon as the chief hands the tokens out.
TEST_F(FaultTest, SyncWithoutSpareGoesOnAfterAPsStallsLongerThanTheRpcTimeout) {
  LocalCluster cluster(1, 3, TestDir());
  auto flags = Flags("sync", 300);
  flags.push_back("--replicas_to_aggregate=3");
  flags.push_back("--join_timeout_ms=30000");
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  WaitForStep(chief, 60);
  chief.Signal(SIGSTOP);
  std::this_thread::sleep_for(milliseconds(1000));  // the step in flight completes on the ps
  cluster.task("ps", 0).Signal(SIGSTOP);
  chief.Signal(SIGCONT);
  const auto a_pull_failed = [&cluster] {
    for (int w = 0; w < 3; ++w) {
      if (cluster.task("worker", w).Log().find("waiting for the cluster to recover") !=
          std::string::npos) {
        return true;
      }
    }
    return false;
  };
  for (int i = 0; i < 3000 && !a_pull_failed(); ++i) std::this_thread::sleep_for(milliseconds(10));
  cluster.task("ps", 0).Signal(SIGCONT);
  EXPECT_TRUE(a_pull_failed()) << "no worker's step failed while ps:0 was stopped";
  ExpectAllExitZero(cluster);
  const std::string log = chief.Log();
  EXPECT_EQ(log.find("training resumes at global step"), std::string::npos) << log;
  EXPECT_EQ(ReportValue(log, "Global-Step: ").value_or(0), 300) << log;
}

// A worker blocked on a ps that died (its pull waits up to
// --rpc_timeout_ms) stops at once on SIGTERM, as Slurm's scancel and a pod
// eviction send it.
TEST_F(FaultTest, WorkerStopsAtOnceOnSigtermWhileItsPsIsDown) {
  LocalCluster cluster(1, 2, TestDir());
  auto flags = Flags("async", 100000);
  flags.push_back("--rpc_timeout_ms=120000");
  cluster.StartAll(flags);
  WaitForStep(cluster.task("chief"), 100);
  cluster.task("ps", 0).Signal(SIGKILL);
  std::this_thread::sleep_for(milliseconds(500));  // the workers now wait on it
  ChildProcess& worker = cluster.task("worker", 0);
  worker.Signal(SIGTERM);
  const std::optional<int> code = worker.Wait(seconds(20));
  ASSERT_TRUE(code.has_value()) << "still running 20 s after SIGTERM\n" << worker.Log();
  EXPECT_EQ(*code, 0) << worker.Log();
}

// A chief lost before the first checkpoint comes back with the cluster id
// it recorded in --checkpoint_dir: a new one would be refused by the running
// ps, and the restarted chief would fail again and again.
TEST_F(FaultTest, ChiefKilledBeforeTheFirstCheckpointKeepsItsClusterId) {
  LocalCluster cluster(1, 2, TestDir());
  auto flags = Flags("sync", 200);  // the first checkpoint is at step 50
  flags.push_back("--replicas_to_aggregate=2");
  cluster.StartAll(flags);
  const std::string log = RestartChief(cluster, flags, 10);
  EXPECT_EQ(log.find("refuses a message from cluster"), std::string::npos) << log;
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

// A worker that starts only after the others finished the run: the chief
// waits for it (ChiefOptions::late_worker_grace) and tells it training is
// over, so it exits 0 at once, instead of waiting --join_timeout_ms for a
// chief that is gone and exiting 1.
TEST_F(FaultTest, AWorkerThatStartsAfterTrainingEndedIsToldAndExitsZero) {
  LocalCluster cluster(1, 2, TestDir());
  std::vector<std::string> flags = {"--data_dir=" + data_dir(), "--model=mlp",
                                    "--batch_size=50",          "--train_steps=60",
                                    "--eval_every_steps=0",     "--join_timeout_ms=20000"};
  cluster.StartTask("ps", 0, flags);
  ChildProcess& chief = cluster.StartTask("chief", 0, flags);
  ChildProcess& first = cluster.StartTask("worker", 0, flags);
  ASSERT_EQ(first.Wait(seconds(120)), 0) << first.Log();
  ChildProcess& late = cluster.StartTask("worker", 1, flags);
  EXPECT_EQ(late.Wait(seconds(60)), 0) << late.Log();
  EXPECT_NE(late.Log().find("joined after training ended: nothing to do"), std::string::npos)
      << late.Log();
  EXPECT_EQ(chief.Wait(seconds(60)), 0) << chief.Log();
  EXPECT_NE(chief.Log().find("waiting up to"), std::string::npos) << chief.Log();
}

}  // namespace
}  // namespace pst
