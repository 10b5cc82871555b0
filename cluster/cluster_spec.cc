#include "cluster/cluster_spec.h"

#include <cstdlib>

#include "cluster/json.h"
#include "common/parse_number.h"

namespace pst {

const char* TaskTypeName(TaskType type) {
  switch (type) {
    case TaskType::kPs: return "ps";
    case TaskType::kWorker: return "worker";
    case TaskType::kChief: return "chief";
  }
  return "unknown";
}

StatusOr<HostPort> ParseHostPort(const std::string& flag_name, const std::string& value) {
  const size_t colon = value.rfind(':');
  const std::string bad = "--" + flag_name + ": '" + value + "' ";
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(bad + "is not host:port");
  }
  HostPort hp;
  hp.host = value.substr(0, colon);
  const std::string port = value.substr(colon + 1);
  int p = 0;
  if (!ParseNumber(port, &p) || p < 1 || p > 65535) {
    return InvalidArgument(bad + "has no valid port (1-65535)");
  }
  for (char c : hp.host) {
    if (c == ' ' || c == ',' || c == '/') {
      return InvalidArgument(bad + "has an invalid host");
    }
  }
  hp.port = p;
  return hp;
}

StatusOr<std::vector<HostPort>> ParseHostList(const std::string& flag_name,
                                              const std::string& value) {
  std::vector<HostPort> hosts;
  if (value.empty()) return hosts;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    PST_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(flag_name, value.substr(start, comma - start)));
    hosts.push_back(hp);
    start = comma + 1;
  }
  return hosts;
}

namespace {

StatusOr<std::vector<std::string>> StringList(const JsonValue& cluster, const std::string& key) {
  std::vector<std::string> out;
  const JsonValue* list = cluster.Find(key);
  if (list == nullptr) return out;
  if (!list->is_array()) {
    return InvalidArgument("TF_CONFIG: cluster." + key + " is not a list");
  }
  for (const JsonValue& v : list->array()) {
    if (!v.is_string()) {
      return InvalidArgument("TF_CONFIG: cluster." + key + " holds a non-string");
    }
    out.push_back(v.string());
  }
  return out;
}

}  // namespace

StatusOr<TfConfig> ParseTfConfig(const std::string& json) {
  PST_ASSIGN_OR_RETURN(JsonValue root, ParseJson(json));
  if (!root.is_object()) return InvalidArgument("TF_CONFIG: not a JSON object");
  // The training-operator writes it instead of "cluster" for a TFJob with
  // enableDynamicWorker: each worker then sees only itself, but every task
  // here needs every address (workers join the chief, the chief probes them).
  if (root.Find("sparseCluster") != nullptr) {
    return InvalidArgument(
        "TF_CONFIG: sparseCluster (a TFJob with enableDynamicWorker) is not supported: "
        "every task needs the whole cluster; turn enableDynamicWorker off");
  }
  TfConfig config;
  if (const JsonValue* cluster = root.Find("cluster")) {
    if (!cluster->is_object()) {
      return InvalidArgument("TF_CONFIG: cluster is not an object");
    }
    PST_ASSIGN_OR_RETURN(config.ps, StringList(*cluster, "ps"));
    PST_ASSIGN_OR_RETURN(config.workers, StringList(*cluster, "worker"));
    PST_ASSIGN_OR_RETURN(std::vector<std::string> chief, StringList(*cluster, "chief"));
    // Older TFJobs (and TF 1.x estimators) name the chief "master".
    PST_ASSIGN_OR_RETURN(std::vector<std::string> master, StringList(*cluster, "master"));
    if (!chief.empty() && !master.empty()) {
      return InvalidArgument("TF_CONFIG: cluster holds both chief and master (one chief only)");
    }
    if (chief.empty()) chief = std::move(master);
    if (chief.size() > 1) {
      return InvalidArgument("TF_CONFIG: cluster.chief must hold one host");
    }
    if (!chief.empty()) config.chief = chief[0];
  }
  if (const JsonValue* task = root.Find("task")) {
    if (!task->is_object()) return InvalidArgument("TF_CONFIG: task is not an object");
    if (const JsonValue* type = task->Find("type")) {
      if (!type->is_string()) return InvalidArgument("TF_CONFIG: task.type is not a string");
      config.task_type = type->string() == "master" ? "chief" : type->string();
    }
    if (const JsonValue* index = task->Find("index")) {
      if (!index->is_number() || index->number() < 0) {
        return InvalidArgument("TF_CONFIG: task.index is not a non-negative number");
      }
      config.task_index = static_cast<int>(index->number());
    }
  }
  return config;
}

Status ValidateTask(const ClusterSpec& spec, TaskType type, int task_index) {
  size_t count = 1;
  if (type == TaskType::kPs) count = spec.ps.size();
  if (type == TaskType::kWorker) count = spec.workers.size();
  if (task_index < 0 || static_cast<size_t>(task_index) >= count) {
    return InvalidArgument("--task_index=" + std::to_string(task_index) +
                           " is out of range: the cluster has " + std::to_string(count) + " " +
                           TaskTypeName(type) + " task(s), valid indexes 0.." +
                           std::to_string(static_cast<int>(count) - 1));
  }
  return Status::OK();
}

}  // namespace pst
