// ChiefOptions: what the chief runs (the cluster, the job, the cadences of
// logs, evaluations and checkpoints), filled from the flags in cli/. A plain
// struct, shared by the chief's pieces (chief/chief_*.h, shard_keeper.h).
#ifndef PST_CHIEF_CHIEF_OPTIONS_H_
#define PST_CHIEF_CHIEF_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "job/job.h"
#include "ps/ps_client.h"
#include "ps/shard_config.h"
#include "scheduler/plateau_decision.h"
#include "transport/curve.h"

namespace pst {

// --follow with --train_steps=0: a global step no run reaches, so the run
// goes on until a signal ends it.
inline constexpr int64_t kUntilStopped = int64_t{1} << 60;

struct ChiefOptions {
  // Copies of each shard (--ps_replicas; docs/REPLICATED_SHARDS.md).
  int ps_replicas = 1;
  ClusterSpec cluster;
  uint64_t cluster_id = 0;  // 0: pick a random one
  // --container: the job's named container on the ps ("": the default);
  // --reset_container: discard what it holds before initializing it.
  std::string container;
  bool reset_container = false;
  JobOptions job;  // the data and the model
  uint64_t seed = 1;
  ShardConfig shard;     // optimizer and staleness policy, applied on every ps
  TableSettings tables;  // how the ps create the rows of a click model's tables
  // Sync, --replicas_to_aggregate=auto: N is picked per step;
  // shard.replicas_to_aggregate (every worker) is then the most it can be.
  bool auto_quorum = false;
  // --mode=ssp: how many steps a worker may run ahead of the slowest live
  // one (the ps run their async path); unset in the other modes.
  std::optional<int64_t> staleness_bound;
  PlacementOptions placement;
  int64_t train_steps = 1000;  // kUntilStopped: --follow with --train_steps=0
  int64_t eval_every_steps = 500;
  // With a validation set: training stops after this many evaluations in a
  // row without a better validation score (0: never early).
  int early_stopping_patience = 0;
  // --lr_schedule=plateau (needs a validation set and evaluations): when
  // the chief lowers the rate (--lr_plateau_patience, _min_delta, _cooldown).
  PlateauOptions lr_plateau;
  int64_t log_every_steps = 50;  // Step lines and TensorBoard's training scalars
  // Between two progress lines on a stdout that is not a terminal (on a
  // terminal the line is redrawn in place); 0: no progress line.
  double progress_every_secs = 5;
  int heartbeat_timeout_ms = 10000;  // a task silent this long is declared dead
  // Training open this long with no worker alive ends the run with an
  // error (chief/worker_absence.h); a worker waits as long for the chief.
  int join_timeout_ms = 120000;
  // How often the ps and workers send heartbeats (they speak at least this often).
  std::chrono::milliseconds heartbeat_interval{2500};
  // How long a restarted chief gives the workers of the run before it to
  // speak up (ChiefState::AwaitEarlierWorkersFor): a heartbeat interval and
  // half of one for the message on its way.
  std::chrono::milliseconds earlier_workers_window() const { return heartbeat_interval * 3 / 2; }
  // How long the chief, once training is over, waits for workers it has
  // never heard from (ChiefState::EveryWorkerHeardFrom): a heartbeat timeout,
  // the time after which a worker that spoke would be declared dead.
  std::chrono::milliseconds late_worker_grace() const {
    return std::chrono::milliseconds(heartbeat_timeout_ms);
  }
  std::string run_dir;      // metrics.jsonl and model.bin go here ("" = nowhere)
  std::string export_onnx;  // the trained model as ONNX, at the end ("" = none)
  // The incremental export (job/export_files.h): every export_every_secs
  // (0: none) a base or a delta into export_dir; a base after every
  // export_base_every deltas; the newest keep_export_bases bases are kept
  // with their deltas.
  std::string export_dir;
  int export_every_secs = 0;
  int export_base_every = 10;
  int keep_export_bases = 2;
  std::string logdir;  // TensorBoard: each run's events in a sub-folder ("" = none)
  // Checkpoints ("" = none): restored at start, saved every N steps and/or
  // seconds (0 = not by that measure) and at the end; the newest
  // keep_checkpoints complete ones are kept.
  std::string checkpoint_dir;
  int64_t checkpoint_every_steps = 0;
  int checkpoint_every_secs = 600;
  int keep_checkpoints = 5;
  // Checkpoints that fail for want of storage in a row before the run stops.
  int max_checkpoint_failures = 3;
  int ps_wait_timeout_ms = 60000;
  int rpc_timeout_ms = 30000;
  size_t max_message_bytes = size_t{1} << 30;
  std::optional<CurveKeys> curve;  // CURVE on every socket when set
  // Port of the Prometheus endpoint (GET /metrics) on the chief's host;
  // 0: none.
  int metrics_port = 0;
  // The address to bind ("": decide from the chief's host name, see
  // transport/bind_address.h).
  std::string bind_host;
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_OPTIONS_H_
