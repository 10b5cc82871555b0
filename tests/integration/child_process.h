// ChildProcess: a program started by a test, with its output in a log file,
// in a process group of its own. The destructor kills that group (SIGKILL):
// the child if it is still running and whatever it started (a script's
// tasks), so a failing test never leaves processes behind; so does a test
// binary interrupted by SIGINT, SIGTERM or SIGHUP. And of a child that a signal
// ended, it removes the shared-memory names left in /dev/shm, which the
// product leaves to the next start of the same job (docs/SHARED_MEMORY.md),
// a start that a test's killed job never gets.
#ifndef PST_TESTS_INTEGRATION_CHILD_PROCESS_H_
#define PST_TESTS_INTEGRATION_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

// The /dev/shm entries (segments and bells, "pst-<cluster id>-<pid>-<purpose>")
// that process `pid` made.
std::vector<std::string> SharedMemoryNamesOf(pid_t pid);

class ChildProcess {
 public:
  // Starts argv[0] with stdout and stderr appended to log_path. `env` holds
  // extra "NAME=value" entries (NAME= alone removes NAME).
  static StatusOr<std::unique_ptr<ChildProcess>> Start(std::vector<std::string> argv,
                                                       const std::string& log_path,
                                                       const std::vector<std::string>& env = {});
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Exit code (128 + signal when killed), or nullopt when still running
  // after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool Running();
  void Signal(int signal);
  std::string Log() const;
  const std::string& log_path() const { return log_path_; }

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  std::optional<int> exit_code_;
};

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_CHILD_PROCESS_H_
