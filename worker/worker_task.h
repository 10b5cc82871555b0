// The worker task: the model training on its shard of the data.
// Each step: pull the variables from every ps shard (all in flight at once),
// compute gradients, push each shard its part (again in parallel).
#ifndef PST_WORKER_WORKER_TASK_H_
#define PST_WORKER_WORKER_TASK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "common/status.h"
#include "data/augment.h"
#include "job/job.h"
#include "kernels/kernels.h"
#include "transport/curve.h"
#include "transport/transport.h"

namespace pst {

struct WorkerOptions {
  ClusterSpec cluster;
  int task_index = 0;
  uint64_t cluster_id = 0;  // 0: learn it from the chief
  // Replicas of each shard (--ps_replicas): > 1 routes each shard's
  // requests to its primary as the chief says (ps/replica_router.h).
  int ps_replicas = 1;
  JobOptions job;                     // the data and the model
  std::string device = "cpu";         // cpu | gpu:N | a list: gpu:0,gpu:1 splits each batch
  int model_parallel = 1;             // pipeline stages the layer stack is cut into (1: none)
  int micro_batches = 4;              // with model_parallel > 1: the most micro-batches per batch
  bool allow_soft_placement = false;  // an unusable GPU falls back to the CPU
  bool log_device_placement = false;  // log where each layer runs
  double gpu_memory_fraction = 1.0;   // cap on the GPU memory the model takes
  CpuKernelsKind cpu_kernels = DefaultCpuKernels();  // what runs on "cpu"
  int intra_op_threads = 1;                          // threads of each oneDNN call
  int64_t batch_size = 100;
  AugmentOptions augment;  // --augment: of the training batches, images only
  float clip_norm = 0;     // > 0: clip each step's gradient by its global norm
  uint64_t seed = 1;
  int64_t warmup_steps = 0;  // only worker 0 trains until the global step reaches this
  bool sync = false;         // take a token from the chief before each step
  bool ssp = false;          // ask the chief's leave before each step (bounded staleness)
  // Async: a step's gradients are pushed in parts as backprop makes them,
  // and acknowledged while the next step computes (GradientStreamer);
  // false: each step pushes once computed and waits for it.
  bool overlap = true;
  // With overlap: a part goes out once its gradients hold this many bytes
  // (PushBuckets); 0: each layer's as soon as it is ready.
  int64_t push_bucket_bytes = int64_t{1} << 20;
  std::string container;       // --container: the job's named container on the ps
  int simulated_delay_ms = 0;  // sleep this long in each step before pushing (a straggler)
  int64_t simulated_delay_from_step = 0;  // ... from this local step on (a straggler later)
  int64_t log_every_steps = 100;
  int64_t report_every_steps = 10;
  PlacementOptions placement;
  int rpc_timeout_ms = 30000;
  int join_timeout_ms = 120000;
  std::chrono::milliseconds heartbeat_interval{2500};  // to the chief, once joined
  size_t max_message_bytes = size_t{1} << 30;
  // How values and gradients travel to and from the ps: kFloat32 or kBFloat16.
  DType wire_dtype = DType::kFloat32;
  std::optional<CurveKeys> curve;  // CURVE on every socket when set
};

// Joins the cluster, trains until the chief stops it (or the global step
// reaches the train steps), then leaves. Errors: bad data, a placement that
// differs from the chief's, an unreachable ps or chief.
Status RunWorker(const WorkerOptions& options);

// The same over `transport` (an in-process one in tests), until done or
// `stop` is set; RunWorker makes a ZeroMQ transport and sets `stop` on
// SIGINT/SIGTERM.
Status RunWorkerOn(const WorkerOptions& options, Transport& transport,
                   const std::atomic<bool>& stop);

}  // namespace pst

#endif  // PST_WORKER_WORKER_TASK_H_
