// The flags every task (ps, worker, chief) reads alike: the cluster, with
// TF_CONFIG filling in what is not given, the transport and failure
// detection. Shared by cli/ps_flags.cc, cli/worker_flags.cc and
// cli/chief_flags.cc; like them, read only on behalf of main(). Each
// InvalidArgument names the bad flag.
#ifndef PST_CLI_TASK_FLAGS_H_
#define PST_CLI_TASK_FLAGS_H_

#include <chrono>
#include <optional>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "common/status.h"
#include "common/tensor.h"
#include "transport/curve.h"

namespace pst {

// The cluster (--ps_hosts, --worker_hosts, --chief_host) and, in
// *task_index, this task's index (--task_index), each taken from TF_CONFIG
// when its flag is not given (an explicit flag wins). Checks that this task,
// of type `type`, is in the cluster.
StatusOr<ClusterSpec> ClusterFromFlags(TaskType type, int* task_index);

// The checks every task makes of the flags the whole cluster shares
// (--mode, --rpc_timeout_ms, --max_message_bytes, --heartbeat_timeout_ms,
// --heartbeat_interval_ms, --wire_dtype, --metrics_port, --bind_host,
// --shm), so that any task refuses what another would. Also applies --shm:
// the process's ZmqTransports start from it.
Status CheckTaskFlags();

// --shm, checked, made the process's default (SetDefaultShmMode) when given.
Status ApplyShmFlag();

// --heartbeat_interval_ms, or a quarter of --heartbeat_timeout_ms when 0.
std::chrono::milliseconds HeartbeatIntervalFromFlags();

// The cluster's CURVE keys when --curve_keys_dir is given, else none.
StatusOr<std::optional<CurveKeys>> CurveFromFlags();

// --wire_dtype: kFloat32 or kBFloat16.
StatusOr<DType> WireDTypeFromFlags();

// --placement and --partition_bytes.
StatusOr<PlacementOptions> PlacementFromFlags();
// --ps_replicas, checked against the cluster's `num_ps` ps tasks.
StatusOr<int> PsReplicasFromFlags(int num_ps);

}  // namespace pst

#endif  // PST_CLI_TASK_FLAGS_H_
