#include "tests/integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "transport/shm/shm_name.h"

extern char** environ;

namespace pst {
namespace {

// The process groups of the children not yet destroyed, for a test binary
// interrupted (Ctrl-C, SIGTERM, SIGHUP) before its destructors run: the
// children have groups of their own, so the terminal's signal no longer
// reaches them.
std::array<std::atomic<pid_t>, 512> live_groups{};

void KillLiveGroupsAndDie(int signal) {
  for (std::atomic<pid_t>& group : live_groups) {
    const pid_t g = group.load();
    if (g > 0) ::kill(-g, SIGKILL);
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void AddLiveGroup(pid_t group) {
  static std::once_flag handlers;
  std::call_once(handlers, [] {
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, KillLiveGroupsAndDie);
  });
  for (std::atomic<pid_t>& slot : live_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void RemoveLiveGroup(pid_t group) {
  for (std::atomic<pid_t>& slot : live_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// The processes `pid` started, theirs, and so on, from /proc: also those
// that left its process group (setsid), as long as `pid` runs.
std::vector<pid_t> DescendantsOf(pid_t pid) {
  std::vector<pid_t> found, parents{pid};
  while (!parents.empty()) {
    const std::string tasks = "/proc/" + std::to_string(parents.back()) + "/task";
    parents.pop_back();
    std::error_code gone;
    for (const auto& task : std::filesystem::directory_iterator(tasks, gone)) {
      std::ifstream in(task.path() / "children");
      for (pid_t child; in >> child;) {
        found.push_back(child);
        parents.push_back(child);
      }
    }
  }
  return found;
}

}  // namespace

StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(std::vector<std::string> argv,
                                                            const std::string& log_path,
                                                            const std::vector<std::string>& env) {
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);
  for (const std::string& entry : env) {
    const std::string name = entry.substr(0, entry.find('=') + 1);
    environment.erase(std::remove_if(environment.begin(), environment.end(),
                                     [&](const std::string& s) { return s.rfind(name, 0) == 0; }),
                      environment.end());
    if (entry.size() > name.size()) environment.push_back(entry);
  }
  std::vector<char*> args, envp;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);

  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return Unavailable("cannot open " + log_path + ": " + std::strerror(errno));
  const int no_input = ::open("/dev/null", O_RDONLY);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    ::close(no_input);
    return Unavailable(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // A group of its own: the destructor kills what it started too (a
    // script's tasks). Set on both sides of the fork, whichever runs first.
    ::setpgid(0, 0);
    // A background group reading the terminal would be stopped.
    ::dup2(no_input, STDIN_FILENO);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execve(args[0], args.data(), envp.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  AddLiveGroup(pid);
  ::close(fd);
  ::close(no_input);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

std::vector<std::string> SharedMemoryNamesOf(pid_t pid) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    const std::string name = entry.path().filename().string();
    const std::optional<ShmNameParts> parts = ParseShmSegmentName(name);
    if (parts && parts->creator == pid) names.push_back(name);
  }
  return names;
}

namespace {

// Unlinks the segments and bells process `pid` made.
void RemoveSharedMemoryOf(pid_t pid) {
  std::error_code error;
  for (const std::string& name : SharedMemoryNamesOf(pid)) {
    std::filesystem::remove("/dev/shm/" + name, error);
  }
}

}  // namespace

ChildProcess::~ChildProcess() {
  // Found before the kill hands them to init.
  const std::vector<pid_t> descendants = exit_code_ ? std::vector<pid_t>() : DescendantsOf(pid_);
  // The child is not reaped before this (Wait leaves it a zombie), so no
  // other process can have its number as a group id yet.
  ::kill(-pid_, SIGKILL);
  for (pid_t descendant : descendants) ::kill(descendant, SIGKILL);
  int status;
  ::waitpid(pid_, &status, 0);
  RemoveLiveGroup(pid_);
  if (!exit_code_) exit_code_ = 128 + SIGKILL;
  if (*exit_code_ >= 128) RemoveSharedMemoryOf(pid_);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exit_code_) {
    siginfo_t info{};
    // WNOWAIT: reaped only by the destructor (there).
    if (::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_) {
      exit_code_ = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exit_code_;
}

bool ChildProcess::Running() { return !Wait(std::chrono::milliseconds(0)).has_value(); }

void ChildProcess::Signal(int signal) {
  if (!exit_code_) ::kill(pid_, signal);
}

std::string ChildProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace pst
