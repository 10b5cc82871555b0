// The chief task: starts the cluster (waits for every ps, initializes the
// variables), opens training, follows the global step, evaluates, writes
// metrics, and at --train_steps stops workers and ps and prints the report.
// It never carries gradient or parameter bytes on the training path.
#ifndef PST_SCHEDULER_CHIEF_TASK_H_
#define PST_SCHEDULER_CHIEF_TASK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "common/status.h"
#include "ps/variable_store.h"
#include "transport/curve.h"

namespace pst {

struct ChiefOptions {
  ClusterSpec cluster;
  uint64_t cluster_id = 0;  // 0: pick a random one
  std::string model = "mlp";
  std::string data_dir;
  uint64_t seed = 1;
  ShardConfig shard;  // optimizer and staleness policy, applied on every ps
  PlacementOptions placement;
  int64_t train_steps = 1000;
  int64_t eval_every_steps = 500;
  int64_t log_every_steps = 100;
  int heartbeat_timeout_ms = 10000;  // a task silent this long is declared dead
  std::string run_dir;  // metrics.jsonl and model.bin go here ("" = nowhere)
  std::string logdir;   // TensorBoard event files go here ("" = none)
  // Checkpoints ("" = none): restored at start, saved every N steps and/or
  // seconds (0 = not by that measure) and at the end; the newest
  // keep_checkpoints complete ones are kept.
  std::string checkpoint_dir;
  int64_t checkpoint_every_steps = 0;
  int checkpoint_every_secs = 600;
  int keep_checkpoints = 5;
  int ps_wait_timeout_ms = 60000;
  int rpc_timeout_ms = 30000;
  size_t max_message_bytes = size_t{1} << 30;
  std::optional<CurveKeys> curve;  // CURVE on every socket when set
};

Status RunChief(const ChiefOptions& options);

}  // namespace pst

#endif  // PST_SCHEDULER_CHIEF_TASK_H_
