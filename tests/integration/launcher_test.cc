// scripts/run_local.sh: a whole cluster from one command, and a failing task
// stopping the whole run.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_mnist.h"
#include "tests/integration/test_util.h"
#include "transport/shm/shm_name.h"

namespace pst {
namespace {

std::string Launcher() {
  const char* source = std::getenv("PST_SOURCE_DIR");
  CHECK(source != nullptr) << "PST_SOURCE_DIR is not set (run through ctest)";
  return std::string(source) + "/scripts/run_local.sh";
}

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    WriteSyntheticMnist(dir_, 2000, 300);
  }
  std::unique_ptr<ChildProcess> Launch(std::vector<std::string> args) {
    std::vector<std::string> argv = {"/bin/bash", Launcher()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto child = ChildProcess::Start(argv, dir_ + "/launcher.log", {"MNIST_DIR=" + dir_});
    CHECK(child.ok());
    return std::move(child).value();
  }
  std::string dir_;
};

TEST_F(LauncherTest, RunsAClusterAndKeepsEveryLog) {
  const std::string run = dir_ + "/run";
  auto launcher = Launch({"--num_ps=2", "--num_workers=2", "--mode=async", "--train_steps=200",
                          "--model=mlp", "--run_dir=" + run, "--", "--batch_size=50",
                          "--learning_rate=0.5", "--eval_every_steps=100"});
  ASSERT_EQ(launcher->Wait(std::chrono::seconds(180)), 0) << launcher->Log();
  const std::string log = launcher->Log();
  EXPECT_NE(log.find("[chief] Test-Accuracy: "), std::string::npos) << log;
  EXPECT_NE(log.find("[worker-1] "), std::string::npos);
  for (const char* f : {"chief.log", "ps-0.log", "ps-1.log", "worker-0.log", "worker-1.log",
                        "metrics.jsonl", "model.bin", "cluster.flags"}) {
    EXPECT_TRUE(std::filesystem::exists(run + "/" + f)) << f;
  }
  EXPECT_TRUE(ProcessesMentioning(run).empty());
}

TEST_F(LauncherTest, FailingTaskStopsEveryTask) {
  const std::string run = dir_ + "/run";
  // Worker shards of 1000 examples cannot fill a batch of 5000: the workers fail.
  auto launcher = Launch({"--num_ps=1", "--num_workers=2", "--mode=async", "--train_steps=100000",
                          "--run_dir=" + run, "--", "--batch_size=5000"});
  const auto code = launcher->Wait(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_NE(launcher->Log().find("failed (exit 1)"), std::string::npos) << launcher->Log();
  EXPECT_TRUE(ProcessesMentioning(run).empty()) << "tasks left running";
}

// Every task reads the launcher's flag file, so a misspelled flag stops the
// first task at start; the launcher stops the rest and names the flag.
TEST_F(LauncherTest, MisspelledFlagFailsTheRunNamingIt) {
  const std::string run = dir_ + "/run";
  auto launcher = Launch({"--num_ps=1", "--num_workers=1", "--mode=async", "--train_stepz=100000",
                          "--run_dir=" + run});
  const auto code = launcher->Wait(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value()) << launcher->Log();
  EXPECT_EQ(*code, 2) << launcher->Log();
  std::string failed;  // the launcher's own line about the failed task
  std::istringstream lines(launcher->Log());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("run_local.sh: ", 0) == 0 &&
        line.find(" failed (exit 2): ") != std::string::npos) {
      failed = line;
    }
  }
  EXPECT_NE(failed.find(": unknown flag --train_stepz in " + run +
                        "/cluster.flags (did you mean --train_steps?)"),
            std::string::npos)
      << launcher->Log();
  EXPECT_TRUE(ProcessesMentioning(run).empty()) << "tasks left running";
}

// The names of the network namespaces there are now.
std::string NetworkNamespaces() {
  std::string names;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns")) {
    names += entry.path().filename().string() + " ";
  }
  return names;
}

// --link_gbit: each task on a host of its own (a network namespace), the
// hosts on one switch with shaped links; the namespaces go with the run.
TEST_F(LauncherTest, LinkGbitRunsEachTaskOnAHostOfItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "--link_gbit needs root (network namespaces)";
  const std::string run = dir_ + "/run";
  auto launcher = Launch({"--num_ps=1", "--num_workers=2", "--mode=async", "--train_steps=200",
                          "--model=mlp", "--link_gbit=1", "--run_dir=" + run, "--",
                          "--batch_size=50", "--learning_rate=0.5", "--eval_every_steps=0"});
  const std::string lab = "pl" + std::to_string(launcher->pid());
  ASSERT_EQ(launcher->Wait(std::chrono::seconds(180)), 0) << launcher->Log();
  EXPECT_NE(launcher->Log().find("[chief] Test-Accuracy: "), std::string::npos);
  std::ifstream in(run + "/cluster.flags");
  const std::string flags((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(std::regex_search(flags, std::regex(R"(--chief_host=10\.78\.0\.1:\d+\n)"
                                                  R"(--ps_hosts=10\.78\.0\.2:\d+\n)"
                                                  R"(--worker_hosts=10\.78\.0\.3:\d+,)"
                                                  R"(10\.78\.0\.4:\d+\n)")))
      << flags;
  EXPECT_TRUE(ProcessesMentioning(run).empty()) << "tasks left running";
  if (std::filesystem::exists("/run/netns")) {
    EXPECT_EQ(NetworkNamespaces().find(lab), std::string::npos) << NetworkNamespaces();
  }
}

TEST_F(LauncherTest, LinkGbitMustBeAPositiveNumberAndNotWithPsHosts) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--link_gbit=0"},
                                               {"--link_gbit=fast"},
                                               {"--link_gbit=10", "--ps_hosts=127.0.0.1:1"}}) {
    std::vector<std::string> argv = {"--num_ps=1", "--num_workers=1", "--run_dir=" + dir_ + "/r"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto launcher = Launch(argv);
    EXPECT_EQ(launcher->Wait(std::chrono::seconds(30)), 2) << launcher->Log();
    EXPECT_NE(launcher->Log().find("--link_gbit"), std::string::npos) << launcher->Log();
  }
}

// The PID of the launcher's task `binary` --task_index=`index` in `run`.
int TaskPid(const std::string& run, const std::string& binary, int index) {
  for (int pid : ProcessesMentioning(run + "/cluster.flags")) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("/bin/" + binary + '\0') != std::string::npos &&
        cmdline.find("--task_index=" + std::to_string(index) + '\0') != std::string::npos) {
      return pid;
    }
  }
  return -1;
}

TEST_F(LauncherTest, RestartFailedBringsAKilledPsBack) {
  const std::string run = dir_ + "/run";
  auto launcher = Launch(
      {"--num_ps=2", "--num_workers=2", "--mode=async", "--train_steps=600", "--model=mlp",
       "--restart_failed", "--run_dir=" + run, "--", "--batch_size=50", "--eval_every_steps=0",
       "--log_every_steps=20", "--simulated_delay_ms=4", "--rpc_timeout_ms=2000",
       "--checkpoint_dir=" + run + "/checkpoints", "--checkpoint_every_steps=50"});
  const std::string chief_log = run + "/chief.log";
  for (int i = 0; i < 3000; ++i) {
    std::ifstream in(chief_log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (ReportValue(text, "Step: ").value_or(0) >= 150) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int ps1 = TaskPid(run, "ps", 1);
  ASSERT_GT(ps1, 0) << launcher->Log();
  ASSERT_EQ(::kill(ps1, SIGKILL), 0);
  ASSERT_EQ(launcher->Wait(std::chrono::seconds(180)), 0) << launcher->Log();
  const std::string log = launcher->Log();
  EXPECT_NE(log.find("ps-1 died (exit 137); restarting it in 1 s"), std::string::npos) << log;
  EXPECT_NE(log.find("restored checkpoint"), std::string::npos) << log;
  EXPECT_GE(ReportValue(log, "[chief] Global-Step: ").value_or(0), 600);
  EXPECT_TRUE(ProcessesMentioning(run).empty());
}

// The restart backoff doubles while a task keeps dying at start-up, and
// starts over at 1 s once the task had been running for 10 s.
TEST_F(LauncherTest, RestartBackoffStartsOverAfterATaskRanAWhile) {
  const std::string run = dir_ + "/run";
  auto launcher = Launch({"--num_ps=1", "--num_workers=2", "--mode=async", "--train_steps=100000",
                          "--model=mlp", "--restart_failed", "--run_dir=" + run, "--",
                          "--batch_size=50", "--eval_every_steps=0", "--simulated_delay_ms=20"});
  // Kills worker 1 once it runs under a new PID; returns that PID.
  const auto kill_new_worker = [&run](int old_pid) {
    int pid = -1;
    for (int i = 0; i < 3000 && (pid <= 0 || pid == old_pid); ++i) {
      pid = TaskPid(run, "worker", 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GT(pid, 0);
    if (pid > 0) ::kill(pid, SIGKILL);
    return pid;
  };
  int pid = kill_new_worker(-1);
  pid = kill_new_worker(pid);  // dies again at once: 2 s
  int restarted = -1;
  for (int i = 0; i < 3000 && (restarted <= 0 || restarted == pid); ++i) {
    restarted = TaskPid(run, "worker", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::seconds(11));
  kill_new_worker(pid);  // ran 11 s: 1 s again
  // The launcher notices a death on its next look: wait for its third line
  // rather than for a fixed time, which a loaded machine can outlast.
  const auto restart_delays = [&launcher] {
    const std::string log = launcher->Log();
    std::vector<std::string> delays;
    const std::regex died("worker-1 died \\(exit 137\\); restarting it in (\\d+) s");
    for (std::sregex_iterator m(log.begin(), log.end(), died), end; m != end; ++m) {
      delays.push_back((*m)[1].str());
    }
    return delays;
  };
  for (int i = 0; i < 3000 && restart_delays().size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  launcher->Signal(SIGINT);
  launcher->Wait(std::chrono::seconds(30));
  EXPECT_EQ(restart_delays(), (std::vector<std::string>{"1", "2", "1"})) << launcher->Log();
  EXPECT_TRUE(ProcessesMentioning(run).empty());
}

// Watches /dev/shm for new names (inotify): a window of a millisecond is
// seen, where looking every few milliseconds misses it.
class ShmWatch {
 public:
  ShmWatch() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ >= 0 && ::inotify_add_watch(fd_, "/dev/shm", IN_CREATE) < 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~ShmWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // Waits up to `timeout` for a name made by `pid`; true when one came.
  bool WaitForNameOf(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    alignas(inotify_event) char buffer[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        if (event->len == 0) continue;
        const std::optional<ShmNameParts> parts = ParseShmSegmentName(event->name);
        if (parts && parts->creator == pid) return true;
      }
    }
    return false;
  }

 private:
  int fd_;
};

// A SIGKILLed worker cannot remove its rings and bells, and no later task of
// the job starts to clean them: the launcher removes them when the run ends.
// A worker's names exist only from its first push, which offers its rings,
// until the ps's answer to it (the worker then unlinks them): a millisecond
// or so, two seconds (--simulated_delay_ms) after it joined. The test kills
// the worker as soon as inotify shows its first name, and holds the run to
// that only if the names were still there once it was dead: a loaded
// machine that keeps the test from acting in time gets a fresh run, up to
// three.
TEST_F(LauncherTest, AKilledTaskLeavesNoSharedMemoryBehind) {
  std::string log;  // the launcher's, every run's
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ShmWatch watch;
    ASSERT_TRUE(watch.ok()) << "inotify on /dev/shm: " << std::strerror(errno);
    const std::string run = dir_ + "/run" + std::to_string(attempt);
    auto launcher =
        Launch({"--num_ps=1", "--num_workers=1", "--mode=async", "--train_steps=100000",
                "--model=mlp", "--run_dir=" + run, "--", "--batch_size=50", "--eval_every_steps=0",
                "--shm=auto", "--overlap=off", "--simulated_delay_ms=2000"});
    int worker = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (worker <= 0 && std::chrono::steady_clock::now() < deadline) {
      worker = TaskPid(run, "worker", 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(worker, 0) << launcher->Log();
    ASSERT_TRUE(watch.WaitForNameOf(worker, std::chrono::minutes(1))) << launcher->Log();
    ASSERT_EQ(::kill(worker, SIGKILL), 0);
    const std::vector<std::string> left = SharedMemoryNamesOf(worker);
    const auto code = launcher->Wait(std::chrono::seconds(60));
    ASSERT_TRUE(code.has_value());
    EXPECT_NE(*code, 0);
    if (left.empty()) {
      std::cerr << "run " << attempt << ": the worker unlinked its names before it died: again\n";
      log += launcher->Log();
      continue;
    }
    EXPECT_EQ(SharedMemoryNamesOf(worker), std::vector<std::string>{}) << "left: " << left[0];
    EXPECT_TRUE(ProcessesMentioning(run).empty());
    return;
  }
  FAIL() << "the worker was never killed while it had names in /dev/shm, in 3 runs\n" << log;
}

TEST_F(LauncherTest, SaysHowToGetMnist) {
  std::vector<std::string> argv = {"/bin/bash", Launcher(), "--num_ps=1", "--num_workers=1"};
  auto child =
      ChildProcess::Start(argv, dir_ + "/nodata.log", {"MNIST_DIR=" + dir_ + "/nothing-here"});
  ASSERT_TRUE(child.ok());
  EXPECT_EQ((*child)->Wait(std::chrono::seconds(30)), 2);
  EXPECT_NE((*child)->Log().find("scripts/get_mnist.sh"), std::string::npos);
}

}  // namespace
}  // namespace pst
