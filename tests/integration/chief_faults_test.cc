// What the chief does when the run cannot go on as planned: checkpoints on a
// full disk (no rollback; stop after --max_checkpoint_failures), a run that
// diverges, a signal while it waits for the ps, a ps that stays down in
// async mode, and the report of a run whose chief was restarted.
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <thread>

#include "chief/checkpoints/checkpointer.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A tmpfs of `bytes` mounted on a fresh folder for the test's lifetime: a
// disk that really fills up. Needs root (CAP_SYS_ADMIN); ok() is false
// without it.
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, size_t bytes) : dir_(dir) {
    fs::create_directories(dir_);
    const std::string options = "size=" + std::to_string(bytes);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool ok() const { return mounted_; }
  size_t free_bytes() const {
    struct statvfs s;
    return ::statvfs(dir_.c_str(), &s) == 0 ? s.f_bavail * s.f_frsize : 0;
  }
  // Fills the disk until `leave` bytes are free.
  void Fill(const std::string& name, size_t leave) {
    std::ofstream(dir_ + "/" + name) << std::string(free_bytes() - leave, 'x');
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

class ChiefFaultsTest : public SyntheticDataTest {
 protected:
  std::vector<std::string> Flags(const std::string& mode, int train_steps) {
    return {"--data_dir=" + data_dir(),
            "--model=mlp",
            "--batch_size=50",
            "--mode=" + mode,
            "--train_steps=" + std::to_string(train_steps),
            "--eval_every_steps=0",
            "--log_every_steps=20",
            "--simulated_delay_ms=4",
            "--rpc_timeout_ms=5000",
            "--heartbeat_timeout_ms=3000"};
  }
  static bool WaitForLog(ChildProcess& task, const std::string& text,
                         milliseconds patience = milliseconds(60000)) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (task.Log().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() >= deadline || !task.Running()) {
        return task.Log().find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return true;
  }
  // After a SIGTERM: the chief checkpointed at a step >= 100 (returned) and
  // exited 128 + SIGTERM, every other task exited 0.
  static int ExpectStoppedAfterCheckpoint(LocalCluster& cluster,
                                          const std::vector<std::string>& others) {
    const auto exits = cluster.WaitAll(seconds(120));
    const std::string log = cluster.task("chief").Log();
    EXPECT_EQ(ExitOf(exits, "chief-0"), 128 + SIGTERM) << DescribeExits(exits) << log;
    for (const std::string& task : others) {
      EXPECT_EQ(ExitOf(exits, task), 0) << task << ": " << DescribeExits(exits) << log;
    }
    EXPECT_EQ(log.find("Test-Accuracy"), std::string::npos) << log;
    std::smatch m;
    if (!std::regex_search(log, m,
                           std::regex("stopped by a signal after checkpointing at step (\\d+)"))) {
      ADD_FAILURE() << "no checkpoint on SIGTERM\n" << log;
      return 0;
    }
    const int saved = std::stoi(m[1].str());
    EXPECT_GE(saved, 100);
    return saved;
  }
  static void WaitForStep(ChildProcess& chief, int step) {
    for (int i = 0; i < 3000 && ReportValue(chief.Log(), "Step: ").value_or(0) < step; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    ASSERT_GE(ReportValue(chief.Log(), "Step: ").value_or(0), step) << chief.Log();
  }
  static int ExitOf(const std::vector<TaskExit>& exits, const std::string& name) {
    for (const TaskExit& e : exits) {
      if (e.name == name) return e.code;
    }
    return -2;
  }
  // The step of the newest readable checkpoint in `dir` (the chief's own
  // look) once it is at least `step` (waits up to a minute); -1 when none
  // comes.
  static int64_t WaitForCheckpointFrom(const std::string& dir, int64_t step) {
    for (int i = 0; i < 3000; ++i) {
      const std::optional<CheckpointManifest> newest = NewestManifest(dir);
      if (newest && newest->step >= step) return newest->step;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return -1;
  }
  // Every checkpoint folder left in `dir` is complete.
  static void ExpectOnlyCompleteCheckpoints(const std::string& dir) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("ckpt-", 0) != 0) continue;
      EXPECT_TRUE(fs::exists(entry.path() / "manifest")) << "incomplete " << name << " left";
    }
  }
};

TEST_F(ChiefFaultsTest, AFullDiskFailsCheckpointsWithoutARollbackAndTrainingGoesOn) {
  const std::string dir = TestDir();
  SmallDisk disk(dir + "/disk", 1 << 20);
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  disk.Fill("filler", 64 << 10);  // the model's part is about 320 KiB
  LocalCluster cluster(1, 2, dir);
  auto flags = Flags("async", 800);
  flags.insert(flags.end(), {"--checkpoint_dir=" + dir + "/disk", "--checkpoint_every_steps=100",
                             "--keep_checkpoints=1"});
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  ASSERT_TRUE(WaitForLog(chief, "training goes on")) << chief.Log();
  fs::remove(dir + "/disk/filler");  // the operator frees space
  const auto exits = cluster.WaitAll(seconds(120));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << chief.Log();
  const std::string log = chief.Log();
  // Named: the folder and the OS error.
  EXPECT_TRUE(std::regex_search(
      log, std::regex("checkpoint [^ ]*/disk/ckpt-0*\\d+ failed: [^\n]*No space left on device")))
      << log;
  EXPECT_EQ(log.find("pausing training"), std::string::npos) << log;
  EXPECT_NE(log.find("saved at step"), std::string::npos) << log;  // retried once space came back
  EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), 800);
  ExpectOnlyCompleteCheckpoints(dir + "/disk");
}

TEST_F(ChiefFaultsTest, StopsAfterMaxCheckpointFailuresInARow) {
  const std::string dir = TestDir();
  SmallDisk disk(dir + "/disk", 64 << 10);  // no part fits
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  LocalCluster cluster(1, 2, dir);
  auto flags = Flags("sync", 5000);
  flags.insert(flags.end(), {"--checkpoint_dir=" + dir + "/disk", "--checkpoint_every_steps=40",
                             "--max_checkpoint_failures=2"});
  cluster.StartAll(flags);
  const auto exits = cluster.WaitAll(seconds(120));
  const std::string log = cluster.task("chief").Log();
  EXPECT_EQ(ExitOf(exits, "chief-0"), 1) << DescribeExits(exits) << log;
  // The ps were stopped and the workers told so: nothing is left running.
  for (const TaskExit& e : exits) EXPECT_NE(e.code, -1) << DescribeExits(exits);
  EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
  EXPECT_NE(log.find("2 checkpoints in a row failed (--max_checkpoint_failures=2)"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("pausing training"), std::string::npos) << log;
  EXPECT_EQ(log.find("Test-Accuracy"), std::string::npos) << log;
  ExpectOnlyCompleteCheckpoints(dir + "/disk");
}

// The last step is done and the model written when the final checkpoint
// fails: the run reports its result and succeeds (a failure would get the
// chief restarted to wait for workers that already left).
TEST_F(ChiefFaultsTest, AFailedFinalCheckpointDoesNotFailAFinishedRun) {
  const std::string dir = TestDir();
  SmallDisk disk(dir + "/disk", 64 << 10);  // no part fits
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  LocalCluster cluster(1, 2, dir);
  auto flags = Flags("sync", 200);
  flags.insert(flags.end(),
               {"--checkpoint_dir=" + dir + "/disk", "--checkpoint_every_steps=0",
                "--checkpoint_every_secs=0", "--max_checkpoint_failures=1", "--run_dir=" + dir});
  cluster.StartAll(flags);
  const auto exits = cluster.WaitAll(seconds(120));
  const std::string log = cluster.task("chief").Log();
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << log;
  EXPECT_NE(log.find("the final checkpoint failed: "), std::string::npos) << log;
  EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
  EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), 200) << log;
  EXPECT_TRUE(fs::exists(dir + "/model.bin"));
  ExpectOnlyCompleteCheckpoints(dir + "/disk");
}

TEST_F(ChiefFaultsTest, ADivergingRunFailsInsteadOfReportingSuccess) {
  LocalCluster cluster(1, 1, TestDir());
  auto flags = Flags("async", 300);
  flags.push_back("--learning_rate=50");
  cluster.StartAll(flags);
  const auto exits = cluster.WaitAll(seconds(120));
  const std::string log = cluster.task("chief").Log();
  EXPECT_EQ(ExitOf(exits, "chief-0"), 1) << DescribeExits(exits) << log;
  EXPECT_TRUE(
      std::regex_search(log, std::regex("training diverged: [^\n]*try a lower --learning_rate")))
      << log;
}

TEST_F(ChiefFaultsTest, SigtermWhileWaitingForThePsStopsTheChiefAtOnce) {
  LocalCluster cluster(1, 1, TestDir());
  auto flags = Flags("async", 100);
  flags.push_back("--ps_wait_timeout_ms=600000");
  ChildProcess& chief = cluster.StartTask("chief", 0, flags);  // no ps ever starts
  ASSERT_TRUE(WaitForLog(chief, "waiting for ps:0")) << chief.Log();
  chief.Signal(SIGTERM);
  const std::optional<int> code = chief.Wait(seconds(30));
  ASSERT_TRUE(code.has_value()) << "still waiting for the ps after SIGTERM\n" << chief.Log();
  EXPECT_EQ(*code, 128 + SIGTERM);
  EXPECT_NE(chief.Log().find("interrupted by a signal while waiting for ps:0"), std::string::npos)
      << chief.Log();
}

// Slurm's scancel and a Kubernetes eviction send SIGTERM: the chief saves
// where the job is, stops every task, and the job started again resumes
// there. Periodic checkpoints are off: only the final one can exist.
TEST_F(ChiefFaultsTest, SigtermCheckpointsStopsTheJobAndARestartedJobResumes) {
  const std::string dir = TestDir();
  auto flags = Flags("sync", 400);
  flags.insert(flags.end(), {"--checkpoint_dir=" + dir + "/ckpt",
                             "--checkpoint_every_steps=1000000", "--checkpoint_every_secs=0"});
  int saved = 0;
  fs::create_directories(dir + "/first");
  fs::create_directories(dir + "/again");
  {
    LocalCluster cluster(1, 2, dir + "/first");
    cluster.StartAll(flags);
    ChildProcess& chief = cluster.task("chief");
    WaitForStep(chief, 100);
    chief.Signal(SIGTERM);
    saved = ExpectStoppedAfterCheckpoint(cluster, {"ps-0", "worker-0", "worker-1"});
    EXPECT_LT(saved, 400);
  }
  int checkpoints = 0;
  for (const auto& entry : fs::directory_iterator(dir + "/ckpt")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) != 0) continue;
    ++checkpoints;
    EXPECT_EQ(std::stoi(name.substr(5)), saved) << name;
    EXPECT_TRUE(fs::exists(entry.path() / "manifest")) << name;
  }
  EXPECT_EQ(checkpoints, 1);

  LocalCluster again(1, 2, dir + "/again");
  again.StartAll(flags);
  const auto exits = again.WaitAll(seconds(240));
  const std::string log = again.task("chief").Log();
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << log;
  EXPECT_TRUE(std::regex_search(
      log, std::regex("restored checkpoint [^\n]*ckpt-0*" + std::to_string(saved) + " at step " +
                      std::to_string(saved))))
      << log;
  EXPECT_GE(ReportValue(log, "Global-Step: ").value_or(0), 400) << log;
}

// scancel, Slurm preemption or deleting every pod of a job signals every
// task at the same moment: the ps keep serving while the chief is in touch,
// so its final checkpoint is still written.
class JobWideSigtermTest : public ChiefFaultsTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(JobWideSigtermTest, EveryTaskSignalledAtOnceStillCheckpoints) {
  const std::string dir = TestDir();
  auto flags = Flags(GetParam(), 100000);
  flags.insert(flags.end(), {"--checkpoint_dir=" + dir + "/ckpt",
                             "--checkpoint_every_steps=1000000", "--checkpoint_every_secs=0"});
  if (GetParam() == "sync") flags.push_back("--replicas_to_aggregate=2");
  LocalCluster cluster(2, 3, dir);
  cluster.StartAll(flags);
  WaitForStep(cluster.task("chief"), 100);
  for (int i = 0; i < 2; ++i) cluster.task("ps", i).Signal(SIGTERM);
  for (int i = 0; i < 3; ++i) cluster.task("worker", i).Signal(SIGTERM);
  cluster.task("chief").Signal(SIGTERM);
  const int saved =
      ExpectStoppedAfterCheckpoint(cluster, {"ps-0", "ps-1", "worker-0", "worker-1", "worker-2"});
  bool complete = false;
  for (const auto& entry : fs::directory_iterator(dir + "/ckpt")) {
    const std::string name = entry.path().filename().string();
    complete |= name.rfind("ckpt-", 0) == 0 && std::stoi(name.substr(5)) == saved &&
                fs::exists(entry.path() / "manifest");
  }
  EXPECT_TRUE(complete) << "no complete checkpoint at step " << saved;
}

INSTANTIATE_TEST_SUITE_P(Modes, JobWideSigtermTest, ::testing::Values("async", "sync"));

// Async, ps:0 holds the global step: the chief reads it with the probes'
// patience, so a dead ps:0 pauses training within about a second rather
// than after --rpc_timeout_ms.
TEST_F(ChiefFaultsTest, AsyncPsThatStaysDownIsNoticedByTheProbesNotTheRpcTimeout) {
  const std::string dir = TestDir();
  LocalCluster cluster(2, 2, dir);
  auto flags = Flags("async", 600);
  flags.insert(flags.end(), {"--rpc_timeout_ms=20000", "--checkpoint_dir=" + dir + "/ckpt",
                             "--checkpoint_every_steps=100"});
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  WaitForStep(chief, 150);
  cluster.task("ps", 0).Signal(SIGKILL);
  EXPECT_TRUE(WaitForLog(chief, "pausing training: ps:0 is down", seconds(10))) << chief.Log();
  cluster.StartTask("ps", 0, flags);
  const auto exits = cluster.WaitAll(seconds(240));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << chief.Log();
}

// After a rollback the chief reports the steps trained again (its Step
// lines are what a user and scripts/chaos.sh follow), not only those past
// the step reached before the failure.
TEST_F(ChiefFaultsTest, StepsTrainedAgainAfterARollbackAreReported) {
  const std::string dir = TestDir();
  LocalCluster cluster(2, 2, dir);
  // The run is ended by the test's SIGTERM, never by its step count: a
  // loaded chief takes a due checkpoint late (the one due at 200 was once
  // taken at the 600-step run's last step), and a run that can end first
  // leaves no training past the checkpoint to roll back.
  auto flags = Flags("async", 100000000);
  flags.insert(flags.end(), {"--log_every_steps=10", "--checkpoint_dir=" + dir + "/ckpt",
                             "--checkpoint_every_steps=100"});
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  WaitForStep(chief, 250);
  // The ps is killed once a checkpoint from step 200 on is saved and
  // training went past it, so that the rollback goes back.
  const int64_t saved = WaitForCheckpointFrom(dir + "/ckpt", 200);
  ASSERT_GE(saved, 200) << chief.Log();
  WaitForStep(chief, static_cast<int>(saved) + 1);
  const int reached = static_cast<int>(ReportValue(chief.Log(), "Step: ").value_or(0));
  cluster.task("ps", 1).Signal(SIGKILL);
  ASSERT_TRUE(WaitForLog(chief, "pausing training")) << chief.Log();
  cluster.StartTask("ps", 1, flags);
  ASSERT_TRUE(WaitForLog(chief, "training resumes at global step", seconds(120))) << chief.Log();
  const std::regex resumed_then_step(
      "training resumes at global step (\\d+)[\\s\\S]*?\nStep: (\\d+),");
  std::string log;
  std::smatch m;
  for (int i = 0; i < 6000 && !std::regex_search(log, m, resumed_then_step); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    log = chief.Log();
  }
  ASSERT_FALSE(m.empty()) << "no Step line after resuming\n" << log;
  const int resumed = std::stoi(m[1].str());
  const int first_report = std::stoi(m[2].str());
  chief.Signal(SIGTERM);
  ExpectStoppedAfterCheckpoint(cluster, {"ps-0", "ps-1", "worker-0", "worker-1"});
  EXPECT_LT(resumed, reached);
  EXPECT_LT(first_report, reached) << "first report after resuming at " << resumed;
}

// The report of a run whose chief was killed and restarted covers the
// whole run, down time included, not the last chief's part.
TEST_F(ChiefFaultsTest, RestartedChiefReportsTheWholeRun) {
  const std::string dir = TestDir();
  LocalCluster cluster(1, 2, dir);
  auto flags = Flags("async", 500);
  flags.insert(flags.end(), {"--checkpoint_dir=" + dir + "/ckpt", "--checkpoint_every_steps=50"});
  cluster.StartAll(flags);
  WaitForStep(cluster.task("chief"), 120);
  cluster.task("chief").Signal(SIGKILL);
  constexpr int kDownSeconds = 3;
  std::this_thread::sleep_for(seconds(kDownSeconds));
  ChildProcess& chief = cluster.StartTask("chief", 0, flags);
  const auto exits = cluster.WaitAll(seconds(240));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << chief.Log();
  const std::string log = chief.Log();
  EXPECT_NE(log.find("this run began"), std::string::npos) << log;
  EXPECT_GE(ReportValue(log, "Total Time: ").value_or(0), kDownSeconds) << log;
}

}  // namespace
}  // namespace pst
