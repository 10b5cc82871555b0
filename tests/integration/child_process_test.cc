// ChildProcess leaves nothing running behind it: what the child started
// goes with it, in its process group or not.
#include "tests/integration/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/local_cluster.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The pid a shell wrote to `path`, once it is there (0 after 10 s).
pid_t PidWrittenTo(const std::string& path) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return 0;
}

// Dead: no such process, or a zombie waiting for its new parent.
bool Dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t end_of_name = line.rfind(')');
  return end_of_name != std::string::npos && line.substr(end_of_name + 2, 1) == "Z";
}

bool DiesWithin(pid_t pid, seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Dead(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

class ChildProcessTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : started_) {
      if (pid > 0) ::kill(pid, SIGKILL);  // what a failed test left
    }
  }
  // Starts a shell running `script`, with $1 and $2 two files to write to.
  std::unique_ptr<ChildProcess> Shell(const std::string& script) {
    auto child = ChildProcess::Start({"/bin/sh", "-c", script, "sh", dir_ + "/one", dir_ + "/two"},
                                     dir_ + "/sh.log");
    EXPECT_TRUE(child.ok()) << child.status().ToString();
    return child.ok() ? std::move(child).value() : nullptr;
  }
  pid_t Started(const std::string& file) {
    started_.push_back(PidWrittenTo(dir_ + "/" + file));
    return started_.back();
  }
  const std::string dir_ = MakeTestDir("child-process");
  std::vector<pid_t> started_;
};

TEST_F(ChildProcessTest, KillingARunningChildKillsWhatItStarted) {
  // One in the child's group, one in a session of its own (as sweep.sh and
  // chaos.sh start their tasks).
  auto child = Shell("sleep 300 & echo $! > \"$1\"; setsid sleep 300 & echo $! > \"$2\"; wait");
  ASSERT_NE(child, nullptr);
  const pid_t in_group = Started("one");
  const pid_t own_session = Started("two");
  ASSERT_GT(in_group, 0);
  ASSERT_GT(own_session, 0);
  EXPECT_TRUE(child->Running());
  child.reset();
  EXPECT_TRUE(DiesWithin(in_group, seconds(10)));
  EXPECT_TRUE(DiesWithin(own_session, seconds(10)));
}

TEST_F(ChildProcessTest, AChildThatExitedTakesItsGroupWithItWhenDestroyed) {
  auto child = Shell("sleep 300 & echo $! > \"$1\"");
  ASSERT_NE(child, nullptr);
  const pid_t left = Started("one");
  ASSERT_GT(left, 0);
  EXPECT_EQ(child->Wait(seconds(10)), 0);
  EXPECT_FALSE(Dead(left)) << "still running while the test needs it";
  child.reset();
  EXPECT_TRUE(DiesWithin(left, seconds(10)));
}

TEST_F(ChildProcessTest, ATestBinaryStoppedBySigtermKillsItsChildrenFirst) {
  const pid_t test_binary = ::fork();
  ASSERT_GE(test_binary, 0);
  if (test_binary == 0) {
    auto child = Shell("sleep 300 & echo $! > \"$1\"; wait");
    if (child == nullptr || PidWrittenTo(dir_ + "/one") == 0) ::_exit(1);
    ::raise(SIGTERM);  // as a Ctrl-C or a batch system would, before any destructor
    ::_exit(2);
  }
  const pid_t grandchild = Started("one");
  int status = 0;
  ASSERT_EQ(::waitpid(test_binary, &status, 0), test_binary);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(DiesWithin(grandchild, seconds(10)));
}

TEST_F(ChildProcessTest, ExitCodesAndSignalsAreReported) {
  auto exits = Shell("exit 3");
  ASSERT_NE(exits, nullptr);
  EXPECT_EQ(exits->Wait(seconds(10)), 3);
  EXPECT_EQ(exits->Wait(seconds(0)), 3) << "asked again";
  auto killed = Shell("sleep 300");
  ASSERT_NE(killed, nullptr);
  killed->Signal(SIGTERM);
  EXPECT_EQ(killed->Wait(seconds(10)), 128 + SIGTERM);
}

}  // namespace
}  // namespace pst
