#include "cli/ps_flags.h"

#include <gflags/gflags.h>

#include <chrono>
#include <string>

#include "cli/flags.h"
#include "cli/task_flags.h"

DECLARE_int32(ps_threads);
DECLARE_int64(max_message_bytes);
DECLARE_uint64(cluster_id);
DECLARE_string(checkpoint_dir);
DECLARE_int32(metrics_port);
DECLARE_string(bind_host);
DECLARE_int32(stop_grace_ms);
DECLARE_string(embedding_storage);

namespace pst {

StatusOr<PsOptions> PsOptionsFromFlags() {
  PST_RETURN_IF_ERROR(CheckTaskFlags());
  PsOptions o;
  PST_ASSIGN_OR_RETURN(o.cluster, ClusterFromFlags(TaskType::kPs, &o.task_index));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("ps_threads", FLAGS_ps_threads));
  o.num_threads = FLAGS_ps_threads;
  o.max_message_bytes = FLAGS_max_message_bytes;
  o.cluster_id = FLAGS_cluster_id;
  o.checkpoint_dir = FLAGS_checkpoint_dir;
  // ram | disk:DIR; the chief decides which tables go to disk, this ps where.
  const std::string storage = FLAGS_embedding_storage;
  if (storage.rfind("disk:", 0) == 0 && storage.size() > 5) {
    o.embedding_storage_dir = storage.substr(5);
  } else if (storage != "ram") {
    return InvalidArgument("--embedding_storage must be ram or disk:DIR, got '" + storage + "'");
  }
  o.heartbeat_interval = HeartbeatIntervalFromFlags();
  o.metrics_port = FLAGS_metrics_port;
  o.bind_host = FLAGS_bind_host;
  if (FLAGS_stop_grace_ms < 0) return InvalidArgument("--stop_grace_ms must be >= 0");
  o.stop.grace = std::chrono::milliseconds(FLAGS_stop_grace_ms);
  PST_ASSIGN_OR_RETURN(o.curve, CurveFromFlags());
  return o;
}

}  // namespace pst
