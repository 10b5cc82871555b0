#include "cli/worker_flags.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cmath>
#include <string>

#include "cli/flags.h"
#include "cli/job_flags.h"
#include "cli/task_flags.h"
#include "data/augment.h"
#include "kernels/kernels.h"
#include "model/zoo/model_zoo.h"
#include "ps/container.h"

DECLARE_uint64(cluster_id);
DECLARE_string(mode);
DECLARE_double(clip_norm);
DECLARE_int32(simulated_delay_ms);
DECLARE_int64(simulated_delay_from_step);
DECLARE_string(device);
DECLARE_int32(model_parallel);
DECLARE_int32(micro_batches);
DECLARE_bool(allow_soft_placement);
DECLARE_bool(log_device_placement);
DECLARE_double(gpu_memory_fraction);
DECLARE_string(cpu_kernels);
DECLARE_int32(intra_op_threads);
DECLARE_int32(batch_size);
DECLARE_string(augment);
DECLARE_string(model_spec);
DECLARE_uint64(seed);
DECLARE_int64(warmup_steps);
DECLARE_int64(worker_log_every_steps);
DECLARE_int32(rpc_timeout_ms);
DECLARE_int32(join_timeout_ms);
DECLARE_int64(max_message_bytes);
DECLARE_string(container);
DECLARE_string(overlap);
DECLARE_int64(push_bucket_bytes);

namespace pst {

StatusOr<WorkerOptions> WorkerOptionsFromFlags() {
  PST_RETURN_IF_ERROR(CheckTaskFlags());
  WorkerOptions o;
  PST_ASSIGN_OR_RETURN(o.cluster, ClusterFromFlags(TaskType::kWorker, &o.task_index));
  o.cluster_id = FLAGS_cluster_id;
  if (!FLAGS_container.empty()) PST_RETURN_IF_ERROR(CheckContainerName(FLAGS_container));
  o.container = FLAGS_container;
  o.sync = FLAGS_mode == "sync";
  o.ssp = FLAGS_mode == "ssp";
  if (FLAGS_overlap != "on" && FLAGS_overlap != "off") {
    return InvalidArgument("--overlap=" + FLAGS_overlap + " is not one of: on, off");
  }
  o.overlap = FLAGS_overlap == "on";
  if (FLAGS_push_bucket_bytes < 0) return InvalidArgument("--push_bucket_bytes must be >= 0");
  o.push_bucket_bytes = FLAGS_push_bucket_bytes;
  if (!(FLAGS_clip_norm >= 0) || !std::isfinite(FLAGS_clip_norm)) {
    return InvalidArgument("--clip_norm must be a finite number >= 0 (0: no clipping)");
  }
  o.clip_norm = static_cast<float>(FLAGS_clip_norm);
  if (FLAGS_simulated_delay_ms < 0) return InvalidArgument("--simulated_delay_ms must be >= 0");
  o.simulated_delay_ms = FLAGS_simulated_delay_ms;
  if (FLAGS_simulated_delay_from_step < 0) {
    return InvalidArgument("--simulated_delay_from_step must be >= 0");
  }
  o.simulated_delay_from_step = FLAGS_simulated_delay_from_step;
  PST_ASSIGN_OR_RETURN(o.job, JobFromFlags(DataSets::kTraining));
  o.device = FLAGS_device;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("model_parallel", FLAGS_model_parallel));
  o.model_parallel = FLAGS_model_parallel;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("micro_batches", FLAGS_micro_batches));
  o.micro_batches = FLAGS_micro_batches;
  o.allow_soft_placement = FLAGS_allow_soft_placement;
  o.log_device_placement = FLAGS_log_device_placement;
  if (!(FLAGS_gpu_memory_fraction > 0 && FLAGS_gpu_memory_fraction <= 1)) {
    return InvalidArgument("--gpu_memory_fraction=" + std::to_string(FLAGS_gpu_memory_fraction) +
                           " must be in (0, 1]");
  }
  o.gpu_memory_fraction = FLAGS_gpu_memory_fraction;
  PST_ASSIGN_OR_RETURN(o.cpu_kernels, ParseCpuKernels(FLAGS_cpu_kernels));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("intra_op_threads", FLAGS_intra_op_threads));
  o.intra_op_threads = FLAGS_intra_op_threads;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("batch_size", FLAGS_batch_size));
  o.batch_size = FLAGS_batch_size;
  // Images only: refused by the input pipeline once the data are loaded. The
  // model spec's augment line applies when --augment is left at its default.
  PST_ASSIGN_OR_RETURN(const SpecTraining spec, SpecTrainingSettings(o.job.model));
  const bool augment_from_spec = spec.augment && !FlagGiven("augment");
  const std::string augment_list = augment_from_spec ? *spec.augment : FLAGS_augment;
  StatusOr<AugmentOptions> augment = ParseAugmentOptions(augment_list);
  if (!augment.ok()) {
    return InvalidArgument((augment_from_spec ? "--model_spec=" + FLAGS_model_spec + ": augment "
                                              : std::string("--augment=")) +
                           augment_list + ": " + augment.status().message());
  }
  if (augment_from_spec) {
    LOG(INFO) << "--augment=" << augment_list << " from the model spec (flag left at its default)";
  }
  o.augment = *augment;
  o.seed = FLAGS_seed;
  if (FLAGS_warmup_steps < 0) return InvalidArgument("--warmup_steps must be >= 0");
  if (o.ssp && FLAGS_warmup_steps > 0) {
    return InvalidArgument(
        "--warmup_steps does not go with --mode=ssp: worker 0 would wait for the others to "
        "come within --staleness_bound, and they for it to finish the warm-up");
  }
  o.warmup_steps = FLAGS_warmup_steps;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("worker_log_every_steps", FLAGS_worker_log_every_steps));
  o.log_every_steps = FLAGS_worker_log_every_steps;
  PST_ASSIGN_OR_RETURN(o.placement, PlacementFromFlags());
  PST_ASSIGN_OR_RETURN(o.ps_replicas, PsReplicasFromFlags(static_cast<int>(o.cluster.ps.size())));
  o.rpc_timeout_ms = FLAGS_rpc_timeout_ms;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("join_timeout_ms", FLAGS_join_timeout_ms));
  o.join_timeout_ms = FLAGS_join_timeout_ms;
  o.heartbeat_interval = HeartbeatIntervalFromFlags();
  o.max_message_bytes = FLAGS_max_message_bytes;
  PST_ASSIGN_OR_RETURN(o.wire_dtype, WireDTypeFromFlags());
  PST_ASSIGN_OR_RETURN(o.curve, CurveFromFlags());
  return o;
}

}  // namespace pst
