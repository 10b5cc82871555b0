#include "cli/task_flags.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "transport/bind_address.h"
#include "transport/shm_options.h"

DECLARE_string(ps_hosts);
DECLARE_string(worker_hosts);
DECLARE_string(chief_host);
DECLARE_string(bind_host);
DECLARE_int32(task_index);
DECLARE_int32(rpc_timeout_ms);
DECLARE_int64(max_message_bytes);
DECLARE_string(wire_dtype);
DECLARE_string(shm);
DECLARE_string(curve_keys_dir);
DECLARE_string(mode);
DECLARE_string(placement);
DECLARE_int64(partition_bytes);
DECLARE_int32(ps_replicas);
DECLARE_int32(heartbeat_timeout_ms);
DECLARE_int32(heartbeat_interval_ms);
DECLARE_int32(metrics_port);

namespace pst {

StatusOr<ClusterSpec> ClusterFromFlags(TaskType type, int* task_index) {
  TfConfig tf;
  if (const char* env = std::getenv("TF_CONFIG"); env != nullptr && *env) {
    PST_ASSIGN_OR_RETURN(tf, ParseTfConfig(env));
  }
  auto join = [](const std::vector<std::string>& hosts) {
    std::string s;
    for (const auto& h : hosts) s += (s.empty() ? "" : ",") + h;
    return s;
  };
  const std::string ps = FlagGiven("ps_hosts") ? FLAGS_ps_hosts : join(tf.ps);
  const std::string workers = FlagGiven("worker_hosts") ? FLAGS_worker_hosts : join(tf.workers);
  const std::string chief = FlagGiven("chief_host") ? FLAGS_chief_host : tf.chief;
  ClusterSpec spec;
  PST_ASSIGN_OR_RETURN(spec.ps, ParseHostList("ps_hosts", ps));
  PST_ASSIGN_OR_RETURN(spec.workers, ParseHostList("worker_hosts", workers));
  if (spec.ps.empty()) return InvalidArgument("--ps_hosts is empty: the cluster needs a ps");
  if (spec.workers.empty()) {
    return InvalidArgument("--worker_hosts is empty: the cluster needs a worker");
  }
  if (chief.empty()) return InvalidArgument("--chief_host is empty");
  PST_ASSIGN_OR_RETURN(spec.chief, ParseHostPort("chief_host", chief));

  *task_index = FLAGS_task_index;
  if (!FlagGiven("task_index") && tf.task_index >= 0) {
    if (!tf.task_type.empty() && tf.task_type != TaskTypeName(type)) {
      return InvalidArgument("TF_CONFIG names task type '" + tf.task_type + "' but this is a " +
                             TaskTypeName(type) + " task");
    }
    *task_index = tf.task_index;
  }
  PST_RETURN_IF_ERROR(ValidateTask(spec, type, *task_index));
  return spec;
}

StatusOr<DType> WireDTypeFromFlags() {
  if (FLAGS_wire_dtype == "float32") return DType::kFloat32;
  if (FLAGS_wire_dtype == "bfloat16") return DType::kBFloat16;
  return InvalidArgument("--wire_dtype=" + FLAGS_wire_dtype + " is not one of: float32, bfloat16");
}

StatusOr<PlacementOptions> PlacementFromFlags() {
  PlacementOptions p;
  StatusOr<PlacementStrategy> strategy = ParsePlacementStrategy(FLAGS_placement);
  if (!strategy.ok()) return InvalidArgument("--placement: " + strategy.status().message());
  p.strategy = *strategy;
  if (FLAGS_partition_bytes < 0) {
    return InvalidArgument("--partition_bytes=" + std::to_string(FLAGS_partition_bytes) +
                           " must be >= 0");
  }
  p.partition_bytes = FLAGS_partition_bytes;
  return p;
}

StatusOr<int> PsReplicasFromFlags(int num_ps) {
  if (FLAGS_ps_replicas < 1 || FLAGS_ps_replicas > num_ps) {
    return InvalidArgument("--ps_replicas=" + std::to_string(FLAGS_ps_replicas) +
                           " must be in 1.." + std::to_string(num_ps) +
                           " (the ps tasks: each replica of a shard is on another one)");
  }
  return FLAGS_ps_replicas;
}

Status ApplyShmFlag() {
  PST_ASSIGN_OR_RETURN(const ShmMode mode, ParseShmMode(FLAGS_shm));
  // Unset, it leaves PST_SHM's word (shm_options.h) standing.
  if (!gflags::GetCommandLineFlagInfoOrDie("shm").is_default) SetDefaultShmMode(mode);
  return Status::OK();
}

Status CheckTaskFlags() {
  if (FLAGS_mode != "async" && FLAGS_mode != "sync" && FLAGS_mode != "ssp") {
    return InvalidArgument("--mode=" + FLAGS_mode + " is not one of: async, sync, ssp");
  }
  PST_RETURN_IF_ERROR(CheckPositiveFlag("rpc_timeout_ms", FLAGS_rpc_timeout_ms));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("max_message_bytes", FLAGS_max_message_bytes));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("heartbeat_timeout_ms", FLAGS_heartbeat_timeout_ms));
  PST_RETURN_IF_ERROR(WireDTypeFromFlags().status());
  PST_RETURN_IF_ERROR(ApplyShmFlag());
  if (FLAGS_metrics_port < 0 || FLAGS_metrics_port > 65535) {
    return InvalidArgument("--metrics_port=" + std::to_string(FLAGS_metrics_port) +
                           " must be in 0..65535 (0: no metrics endpoint)");
  }
  PST_RETURN_IF_ERROR(ValidateBindHost(FLAGS_bind_host));
  if (FLAGS_heartbeat_interval_ms < 0 ||
      FLAGS_heartbeat_interval_ms >= FLAGS_heartbeat_timeout_ms) {
    return InvalidArgument(
        "--heartbeat_interval_ms=" + std::to_string(FLAGS_heartbeat_interval_ms) +
        " must be >= 0 and below --heartbeat_timeout_ms=" +
        std::to_string(FLAGS_heartbeat_timeout_ms));
  }
  return Status::OK();
}

std::chrono::milliseconds HeartbeatIntervalFromFlags() {
  const int ms = FLAGS_heartbeat_interval_ms > 0 ? FLAGS_heartbeat_interval_ms
                                                 : std::max(1, FLAGS_heartbeat_timeout_ms / 4);
  return std::chrono::milliseconds(ms);
}

StatusOr<std::optional<CurveKeys>> CurveFromFlags() {
  if (FLAGS_curve_keys_dir.empty()) return std::optional<CurveKeys>();
  auto keys = LoadCurveKeys(FLAGS_curve_keys_dir);
  if (!keys.ok()) return InvalidArgument("--curve_keys_dir: " + keys.status().message());
  return std::optional<CurveKeys>(*keys);
}

}  // namespace pst
