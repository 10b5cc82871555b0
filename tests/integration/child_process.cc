#include "tests/integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "transport/shm/shm_name.h"

extern char** environ;

namespace pst {

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
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return Unavailable(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execve(args[0], args.data(), envp.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fd);
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
  if (!exit_code_) {
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
    exit_code_ = 128 + SIGKILL;
  }
  if (*exit_code_ >= 128) RemoveSharedMemoryOf(pid_);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exit_code_) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
