// The cluster: where every task listens. Built from --ps_hosts,
// --worker_hosts, --chief_host or from the TF_CONFIG environment variable.
#ifndef PST_CLUSTER_CLUSTER_SPEC_H_
#define PST_CLUSTER_CLUSTER_SPEC_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

struct HostPort {
  std::string host;
  int port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
  std::string Endpoint() const { return "tcp://" + ToString(); }
};

struct ClusterSpec {
  std::vector<HostPort> ps;
  std::vector<HostPort> workers;
  HostPort chief;
};

enum class TaskType { kPs, kWorker, kChief };
const char* TaskTypeName(TaskType type);  // "ps", "worker", "chief"

// "h0:2220,h1:2220" -> hosts. Errors name `flag_name` and the bad entry.
StatusOr<std::vector<HostPort>> ParseHostList(const std::string& flag_name,
                                              const std::string& value);
StatusOr<HostPort> ParseHostPort(const std::string& flag_name, const std::string& value);

// TF_CONFIG: {"cluster": {"ps": [...], "worker": [...], "chief": ["h:p"]},
//             "task": {"type": "worker", "index": 1}}
// as the training-operator writes it for a TFJob ("environment" and other
// keys are ignored). "master", of older TFJobs, is read as "chief" (in the
// cluster and as task.type); "sparseCluster" is refused.
struct TfConfig {
  std::vector<std::string> ps, workers;  // "host:port" entries
  std::string chief;
  std::string task_type;  // "ps", "worker", "chief"; "" when absent
  int task_index = -1;    // -1 when absent
};
StatusOr<TfConfig> ParseTfConfig(const std::string& json);

// Checks that `task_index` names a task of `type` in `spec`; the error names
// the flag --task_index, its value and the valid range.
Status ValidateTask(const ClusterSpec& spec, TaskType type, int task_index);

}  // namespace pst

#endif  // PST_CLUSTER_CLUSTER_SPEC_H_
