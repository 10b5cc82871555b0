// LocalCluster: the real ps, worker and chief executables started on
// 127.0.0.1 with ports the OS picked, for multi-process tests. Every child is
// killed by PID when the cluster is destroyed.
#ifndef PST_TESTS_INTEGRATION_LOCAL_CLUSTER_H_
#define PST_TESTS_INTEGRATION_LOCAL_CLUSTER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/child_process.h"

namespace pst {

// Distinct free TCP ports on 127.0.0.1.
std::vector<int> FreePorts(int count);
// True when nothing listens on 127.0.0.1:port.
bool PortIsFree(int port);
// Folder of the built executables (PST_BIN_DIR, set by ctest).
std::string BinDir();
// A path in the temporary folder for one test's file or folder, named
// after `name`; nothing there yet. Like MakeTestDir's folders, removed once
// every test of the binary has passed; a failed run keeps it.
std::string MakeTestPath(std::string name);
// A fresh, empty folder for one test's files.
std::string MakeTestDir(const std::string& name);

struct TaskExit {
  std::string name;
  int code;
};

class LocalCluster {
 public:
  LocalCluster(int num_ps, int num_workers, std::string dir);
  ~LocalCluster() = default;  // children are killed by their destructors

  // --ps_hosts=... --worker_hosts=... --chief_host=...
  std::vector<std::string> ClusterFlags() const;
  const std::vector<int>& ports() const { return ports_; }
  const std::string& dir() const { return dir_; }

  // Starts a task of `role` ("ps", "worker", "chief") with the cluster flags,
  // --task_index and `flags`. Its log is <dir>/<role>-<index>.log.
  ChildProcess& StartTask(const std::string& role, int index, const std::vector<std::string>& flags,
                          const std::vector<std::string>& env = {});
  // Starts every ps, the chief and every worker with `flags`.
  void StartAll(const std::vector<std::string>& flags);

  ChildProcess& task(const std::string& role, int index = 0);
  // Waits for every started task; a task still running after `timeout` is
  // reported with code -1.
  std::vector<TaskExit> WaitAll(std::chrono::milliseconds timeout);

 private:
  int num_ps_, num_workers_;
  std::string dir_;
  std::vector<int> ports_;  // chief, ps..., workers...
  std::map<std::string, std::unique_ptr<ChildProcess>> tasks_;
};

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_LOCAL_CLUSTER_H_
