#include "cli/chief_flags.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/flags.h"
#include "cli/job_flags.h"
#include "cli/task_flags.h"
#include "common/parse_number.h"
#include "data/augment.h"
#include "model/ctr/ctr_spec.h"
#include "model/zoo/model_zoo.h"
#include "ps/container.h"
#include "ps/shard_config.h"

DECLARE_uint64(cluster_id);
DECLARE_string(mode);
DECLARE_int64(staleness_bound);
DECLARE_string(replicas_to_aggregate);
DECLARE_int32(heartbeat_timeout_ms);
DECLARE_int32(join_timeout_ms);
DECLARE_uint64(seed);
DECLARE_string(optimizer);
DECLARE_double(l1);
DECLARE_double(l2);
DECLARE_int64(embedding_min_count);
DECLARE_double(embedding_l2);
DECLARE_string(embedding_storage);
DECLARE_int64(embedding_cache_rows);
DECLARE_double(learning_rate);
DECLARE_double(momentum);
DECLARE_string(lr_schedule);
DECLARE_int64(lr_decay_steps);
DECLARE_double(lr_decay_rate);
DECLARE_double(lr_min);
DECLARE_int64(lr_warmup_steps);
DECLARE_int32(lr_plateau_patience);
DECLARE_double(lr_plateau_min_delta);
DECLARE_int32(lr_plateau_cooldown);
DECLARE_double(weight_decay);
DECLARE_string(model_spec);
DECLARE_string(staleness_policy);
DECLARE_int64(max_staleness);
DECLARE_int64(train_steps);
DECLARE_int32(early_stopping_patience);
DECLARE_int64(validation_examples);
DECLARE_int64(eval_every_steps);
DECLARE_int64(log_every_steps);
DECLARE_double(progress_every_secs);
DECLARE_string(run_dir);
DECLARE_string(export_onnx);
DECLARE_int32(export_every_secs);
DECLARE_string(export_dir);
DECLARE_int32(export_base_every);
DECLARE_int32(keep_export_bases);
DECLARE_string(logdir);
DECLARE_string(checkpoint_dir);
DECLARE_int64(checkpoint_every_steps);
DECLARE_int32(checkpoint_every_secs);
DECLARE_int32(keep_checkpoints);
DECLARE_int32(max_checkpoint_failures);
DECLARE_int32(ps_wait_timeout_ms);
DECLARE_int32(rpc_timeout_ms);
DECLARE_int64(max_message_bytes);
DECLARE_int32(metrics_port);
DECLARE_string(bind_host);
DECLARE_string(container);
DECLARE_bool(reset_container);

namespace pst {
namespace {

// LrSchedule's message, naming the flag instead of the option's field.
std::string NamingFlags(std::string message) {
  static const std::pair<const char*, const char*> kFlagOfField[] = {
      {"LrScheduleOptions.learning_rate", "--learning_rate"},
      {"LrScheduleOptions.decay_steps", "--lr_decay_steps"},
      {"LrScheduleOptions.decay_rate", "--lr_decay_rate"},
      {"LrScheduleOptions.warmup_steps", "--lr_warmup_steps"},
      {"LrScheduleOptions.lr_min", "--lr_min"}};
  for (const auto& [field, flag] : kFlagOfField) {
    if (const size_t at = message.find(field); at != std::string::npos) {
      message.replace(at, std::string(field).size(), flag);
    }
  }
  return message;
}

// A flag's value, or the model spec's (model/zoo/model_spec.h) when the spec
// states one and the flag is left at its default; then "--flag=value" is
// added to *from_spec.
template <typename F, typename T>
T FlagOrSpec(const char* flag, const F& flag_value, const std::optional<T>& spec_value,
             std::vector<std::string>* from_spec) {
  if (!spec_value || FlagGiven(flag)) return static_cast<T>(flag_value);
  std::ostringstream given;  // 0.0005, not 0.000500
  given << "--" << flag << "=" << *spec_value;
  from_spec->push_back(given.str());
  return *spec_value;
}

// The schedules whose decay steps have a natural length, the whole run:
// cosine's one descent to --lr_min, exponential's one --lr_decay_rate
// factor. A step schedule's decay steps are a period, with no natural length.
bool DecaysOverTheWholeRun(const std::string& schedule) {
  return schedule == "cosine" || schedule == "exponential";
}

// The learning-rate schedule and weight decay, from the flags or the model
// spec, checked as the ps will check them, so that a bad value stops the
// chief before it starts anything. `train_steps` (> 0) is the decay steps
// of a schedule in DecaysOverTheWholeRun when neither gives them.
Status ScheduleFromFlags(const SpecTraining& spec, int64_t train_steps, ShardConfig* shard) {
  std::vector<std::string> from_spec;
  shard->lr_schedule = FlagOrSpec("lr_schedule", FLAGS_lr_schedule, spec.lr_schedule, &from_spec);
  shard->lr_decay_steps =
      FlagOrSpec("lr_decay_steps", FLAGS_lr_decay_steps, spec.lr_decay_steps, &from_spec);
  if (shard->lr_decay_steps == 0 && DecaysOverTheWholeRun(shard->lr_schedule)) {
    shard->lr_decay_steps = train_steps;
  }
  shard->lr_decay_rate = static_cast<float>(
      FlagOrSpec("lr_decay_rate", FLAGS_lr_decay_rate, spec.lr_decay_rate, &from_spec));
  shard->lr_min = static_cast<float>(FlagOrSpec("lr_min", FLAGS_lr_min, spec.lr_min, &from_spec));
  shard->lr_warmup_steps =
      FlagOrSpec("lr_warmup_steps", FLAGS_lr_warmup_steps, spec.lr_warmup_steps, &from_spec);
  shard->weight_decay = static_cast<float>(
      FlagOrSpec("weight_decay", FLAGS_weight_decay, spec.weight_decay, &from_spec));
  std::string given_by_spec;
  for (const std::string& flag : from_spec) given_by_spec += " " + flag;
  const std::string note = from_spec.empty() ? "" : " (from the model spec:" + given_by_spec + ")";
  if (StatusOr<LrSchedule> s = LrScheduleOf(*shard); !s.ok()) {
    return InvalidArgument("--lr_schedule=" + shard->lr_schedule + ": " +
                           NamingFlags(s.status().message()) + note);
  }
  if (Status s = CheckWeightDecay(*shard); !s.ok()) {
    return InvalidArgument("--" + s.message() + note);
  }
  if (!from_spec.empty()) {
    LOG(INFO) << given_by_spec.substr(1) << " from the model spec (flags left at their defaults)";
  }
  return Status::OK();
}

// --lr_schedule=plateau's decision, which the chief makes on the validation
// loss of its evaluations: without either there is nothing to decide on.
StatusOr<PlateauOptions> PlateauFromFlags(const std::string& schedule) {
  PlateauOptions o;
  if (FLAGS_lr_plateau_patience < 1) {
    return InvalidArgument("--lr_plateau_patience=" + std::to_string(FLAGS_lr_plateau_patience) +
                           " must be >= 1");
  }
  if (!(FLAGS_lr_plateau_min_delta >= 0) || !std::isfinite(FLAGS_lr_plateau_min_delta)) {
    std::ostringstream given;  // -0.5, not -0.500000
    given << FLAGS_lr_plateau_min_delta;
    return InvalidArgument("--lr_plateau_min_delta=" + given.str() + " must be finite and >= 0");
  }
  if (FLAGS_lr_plateau_cooldown < 0) {
    return InvalidArgument("--lr_plateau_cooldown=" + std::to_string(FLAGS_lr_plateau_cooldown) +
                           " must be >= 0");
  }
  o.patience = FLAGS_lr_plateau_patience;
  o.min_delta = FLAGS_lr_plateau_min_delta;
  o.cooldown = FLAGS_lr_plateau_cooldown;
  if (schedule != "plateau") return o;
  if (FLAGS_validation_examples <= 0 || FLAGS_eval_every_steps <= 0) {
    return InvalidArgument(
        "--lr_schedule=plateau needs --validation_examples > 0 and --eval_every_steps > 0: the "
        "chief lowers the rate when the validation loss of its evaluations stops improving");
  }
  return o;
}

// The spec's augment line is the workers' (cli/worker_flags.cc), checked
// here too so that a bad one stops the chief before it starts anything.
Status CheckSpecAugment(const SpecTraining& spec) {
  if (!spec.augment) return Status::OK();
  if (StatusOr<AugmentOptions> a = ParseAugmentOptions(*spec.augment); !a.ok()) {
    return InvalidArgument("--model_spec=" + FLAGS_model_spec + ": augment " + *spec.augment +
                           ": " + a.status().message());
  }
  return Status::OK();
}

// --container and --reset_container.
Status ContainerFromFlags(ChiefOptions* o) {
  if (!FLAGS_container.empty()) PST_RETURN_IF_ERROR(CheckContainerName(FLAGS_container));
  if (FLAGS_reset_container && FLAGS_container.empty()) {
    return InvalidArgument("--reset_container needs the --container to reset");
  }
  o->container = FLAGS_container;
  o->reset_container = FLAGS_reset_container;
  return Status::OK();
}

// What --mode needs: sync's --replicas_to_aggregate (of the cluster's
// workers), ssp's --staleness_bound (a flag of that mode only).
Status ModeFromFlags(ChiefOptions* o) {
  if (FLAGS_mode == "sync") {
    const int workers = static_cast<int>(o->cluster.workers.size());
    o->auto_quorum = FLAGS_replicas_to_aggregate == "auto";
    int n = workers;
    if (!o->auto_quorum) {
      const std::string& given = FLAGS_replicas_to_aggregate;
      int value = -1;
      if (!ParseNumber(given, &value) || value < 0 || value > workers) {
        return InvalidArgument("--replicas_to_aggregate=" + given + " must be in 1.." +
                               std::to_string(workers) +
                               " (the number of workers), 0 (all of them) or auto");
      }
      if (value > 0) n = value;
    }
    o->shard.mode = TrainingMode::kSync;
    o->shard.replicas_to_aggregate = n;
  }
  if (FLAGS_mode == "ssp") {
    if (FLAGS_staleness_bound < 0) {
      return InvalidArgument("--staleness_bound=" + std::to_string(FLAGS_staleness_bound) +
                             " must be >= 0");
    }
    o->staleness_bound = FLAGS_staleness_bound;
  } else if (FlagGiven("staleness_bound")) {
    return InvalidArgument("--staleness_bound applies only with --mode=ssp");
  }
  return Status::OK();
}

// The optimizer of `job`'s model: --optimizer (a click model's own unless
// given), --learning_rate (0: the model's recommended rate), --momentum,
// --l1 and --l2.
Status OptimizerFromFlags(const JobOptions& job, OptimizerConfig* optimizer) {
  optimizer->name = FLAGS_optimizer;
  if (IsClickModel(job.model) && !FlagGiven("optimizer")) {
    // A click model trains with its own optimizer unless told otherwise.
    PST_ASSIGN_OR_RETURN(const ClickTraining training, ClickModelTraining(job.model));
    optimizer->name = training.optimizer;
  }
  if (FLAGS_learning_rate < 0) {
    return InvalidArgument("--learning_rate=" + std::to_string(FLAGS_learning_rate) +
                           " must be >= 0 (0: the model's recommended rate)");
  }
  optimizer->learning_rate = static_cast<float>(FLAGS_learning_rate);
  if (FLAGS_learning_rate == 0) {
    StatusOr<float> recommended = IsClickModel(job.model)
                                      ? ClickModelLearningRate(job.model, optimizer->name)
                                      : RecommendedLearningRate(job.model);
    if (!recommended.ok()) {
      return InvalidArgument(recommended.status().message() + ": give --learning_rate");
    }
    optimizer->learning_rate = *recommended;
  }
  optimizer->momentum = static_cast<float>(FLAGS_momentum);
  if (!(FLAGS_l1 >= 0) || !(FLAGS_l2 >= 0)) return InvalidArgument("--l1 and --l2 must be >= 0");
  optimizer->l1 = static_cast<float>(FLAGS_l1);
  optimizer->l2 = static_cast<float>(FLAGS_l2);
  return Status::OK();
}

// How the ps create the rows of `job`'s tables: --embedding_min_count (the
// feature file's unless given), --embedding_l2, the job's capacity, --seed.
Status TablesFromFlags(const JobOptions& job, TableSettings* tables) {
  PST_RETURN_IF_ERROR(CheckPositiveFlag("embedding_min_count", FLAGS_embedding_min_count));
  tables->min_count = FLAGS_embedding_min_count;
  if (!std::isfinite(FLAGS_embedding_l2) || FLAGS_embedding_l2 < 0) {
    return InvalidArgument("--embedding_l2 must be a finite number >= 0");
  }
  tables->l2 = static_cast<float>(FLAGS_embedding_l2);
  // A feature file's min_count stands unless the flag says otherwise.
  if (job.data.features && job.data.features->summary.min_count > 0) {
    const int64_t file = job.data.features->summary.min_count;
    if (FlagGiven("embedding_min_count") && FLAGS_embedding_min_count != file) {
      return InvalidArgument("--embedding_min_count=" + std::to_string(FLAGS_embedding_min_count) +
                             " differs from the feature file's min_count=" + std::to_string(file));
    }
    tables->min_count = file;
  }
  tables->capacity = job.embedding_capacity;
  tables->seed = FLAGS_seed;
  // ram | disk:DIR: the DIR is each ps's own (its flag), only the choice
  // travels in the init.
  const std::string storage = FLAGS_embedding_storage;
  tables->on_disk = storage.rfind("disk:", 0) == 0 && storage.size() > 5;
  if (!tables->on_disk && storage != "ram") {
    return InvalidArgument("--embedding_storage must be ram or disk:DIR, got '" + storage + "'");
  }
  if (tables->on_disk) {
    if (job.embedding_capacity <= 0) {
      return InvalidArgument(
          "--embedding_storage=disk needs dynamic embedding tables (--embedding_capacity > 0): "
          "fixed tables (--embedding_rows) stay in RAM");
    }
    PST_RETURN_IF_ERROR(CheckPositiveFlag("embedding_cache_rows", FLAGS_embedding_cache_rows));
    tables->cache_rows = FLAGS_embedding_cache_rows;
  }
  return Status::OK();
}

// How long the run trains and how often it evaluates, logs and shows its
// progress; when it stops early.
Status CadencesFromFlags(ChiefOptions* o) {
  if (o->train_steps != kUntilStopped) o->train_steps = FLAGS_train_steps;
  if (FLAGS_eval_every_steps < 0) return InvalidArgument("--eval_every_steps must be >= 0");
  o->eval_every_steps = FLAGS_eval_every_steps;
  if (FLAGS_early_stopping_patience < 0) {
    return InvalidArgument("--early_stopping_patience must be >= 0 (0: never stop early)");
  }
  if (FLAGS_early_stopping_patience > 0 && FLAGS_validation_examples == 0) {
    return InvalidArgument(
        "--early_stopping_patience needs --validation_examples: it counts evaluations of the "
        "validation set");
  }
  o->early_stopping_patience = FLAGS_early_stopping_patience;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("log_every_steps", FLAGS_log_every_steps));
  o->log_every_steps = FLAGS_log_every_steps;
  if (!(FLAGS_progress_every_secs >= 0))
    return InvalidArgument("--progress_every_secs must be >= 0");
  o->progress_every_secs = FLAGS_progress_every_secs;
  return Status::OK();
}

// --export_every_secs and its folder, cadence and count; refused where the
// export cannot follow the model (replicated shards).
Status ExportFromFlags(ChiefOptions* o) {
  if (FLAGS_export_every_secs < 0) return InvalidArgument("--export_every_secs must be >= 0");
  o->export_every_secs = FLAGS_export_every_secs;
  if (o->export_every_secs == 0) {
    if (!FLAGS_export_dir.empty()) {
      return InvalidArgument("--export_dir needs --export_every_secs (how often to export)");
    }
    return Status::OK();
  }
  o->export_dir =
      FLAGS_export_dir.empty() && !o->run_dir.empty() ? o->run_dir + "/export" : FLAGS_export_dir;
  if (o->export_dir.empty()) {
    return InvalidArgument("--export_every_secs needs --export_dir (or --run_dir)");
  }
  PST_RETURN_IF_ERROR(CheckPositiveFlag("export_base_every", FLAGS_export_base_every));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("keep_export_bases", FLAGS_keep_export_bases));
  o->export_base_every = FLAGS_export_base_every;
  o->keep_export_bases = FLAGS_keep_export_bases;
  if (o->ps_replicas > 1) {
    return InvalidArgument("--export_every_secs does not work with --ps_replicas > 1 yet");
  }
  return Status::OK();
}

// What the run writes: its run dir, the ONNX export, TensorBoard's logdir,
// and the checkpoints, their cadence and how many are kept.
Status OutputsFromFlags(ChiefOptions* o) {
  o->run_dir = FLAGS_run_dir;
  o->export_onnx = FLAGS_export_onnx;
  if (!o->export_onnx.empty() && o->job.embedding_capacity > 0) {
    return InvalidArgument(
        "--export_onnx: a click model with dynamic embedding tables (--embedding_capacity) does "
        "not export to ONNX (any 64-bit key has its own row); model.bin and predict serve it");
  }
  o->logdir = FLAGS_logdir;
  PST_RETURN_IF_ERROR(ExportFromFlags(o));
  o->checkpoint_dir = FLAGS_checkpoint_dir;
  // The ps write a named container's parts under DIR/NAME too.
  if (!o->checkpoint_dir.empty() && !o->container.empty()) o->checkpoint_dir += "/" + o->container;
  if (FLAGS_checkpoint_every_steps < 0 || FLAGS_checkpoint_every_secs < 0) {
    return InvalidArgument("--checkpoint_every_steps and --checkpoint_every_secs must be >= 0");
  }
  o->checkpoint_every_steps = FLAGS_checkpoint_every_steps;
  o->checkpoint_every_secs = FLAGS_checkpoint_every_secs;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("keep_checkpoints", FLAGS_keep_checkpoints));
  o->keep_checkpoints = FLAGS_keep_checkpoints;
  PST_RETURN_IF_ERROR(CheckPositiveFlag("max_checkpoint_failures", FLAGS_max_checkpoint_failures));
  o->max_checkpoint_failures = FLAGS_max_checkpoint_failures;
  return Status::OK();
}

}  // namespace

StatusOr<ChiefOptions> ChiefOptionsFromFlags() {
  PST_RETURN_IF_ERROR(CheckTaskFlags());
  ChiefOptions o;
  int index = 0;
  PST_ASSIGN_OR_RETURN(o.cluster, ClusterFromFlags(TaskType::kChief, &index));
  o.cluster_id = FLAGS_cluster_id;
  PST_RETURN_IF_ERROR(ContainerFromFlags(&o));
  PST_RETURN_IF_ERROR(ModeFromFlags(&o));
  o.heartbeat_timeout_ms = FLAGS_heartbeat_timeout_ms;
  if (FLAGS_join_timeout_ms <= 0) return InvalidArgument("--join_timeout_ms must be > 0");
  o.join_timeout_ms = FLAGS_join_timeout_ms;
  o.heartbeat_interval = HeartbeatIntervalFromFlags();
  PST_ASSIGN_OR_RETURN(o.job, JobFromFlags(DataSets::kTrainingAndTest));
  o.seed = FLAGS_seed;
  PST_RETURN_IF_ERROR(OptimizerFromFlags(o.job, &o.shard.optimizer));
  PST_ASSIGN_OR_RETURN(const SpecTraining spec, SpecTrainingSettings(o.job.model));
  // --follow with --train_steps=0: until a signal ends the run.
  const bool until_stopped = !o.job.data.train_files.empty() && FLAGS_train_steps == 0;
  if (!until_stopped) PST_RETURN_IF_ERROR(CheckPositiveFlag("train_steps", FLAGS_train_steps));
  if (until_stopped) o.train_steps = kUntilStopped;
  PST_RETURN_IF_ERROR(
      ScheduleFromFlags(spec, until_stopped ? kUntilStopped : FLAGS_train_steps, &o.shard));
  PST_ASSIGN_OR_RETURN(o.lr_plateau, PlateauFromFlags(o.shard.lr_schedule));
  PST_RETURN_IF_ERROR(CheckSpecAugment(spec));
  PST_RETURN_IF_ERROR(TablesFromFlags(o.job, &o.tables));
  PST_ASSIGN_OR_RETURN(o.shard.staleness_policy, ParseStalenessPolicy(FLAGS_staleness_policy));
  if (FLAGS_max_staleness < 0) return InvalidArgument("--max_staleness must be >= 0");
  o.shard.max_staleness = FLAGS_max_staleness;
  PST_ASSIGN_OR_RETURN(o.placement, PlacementFromFlags());
  PST_ASSIGN_OR_RETURN(o.ps_replicas, PsReplicasFromFlags(static_cast<int>(o.cluster.ps.size())));
  if (o.ps_replicas > 1 && o.tables.on_disk) {
    return InvalidArgument(
        "--embedding_storage=disk does not work with --ps_replicas > 1: a backup is shipped "
        "every row, which a table larger than memory cannot be");
  }
  if (o.ps_replicas > 1 && !o.job.data.train_files.empty()) {
    return InvalidArgument("--follow does not work with --ps_replicas > 1 yet");
  }
  if (o.ps_replicas > 1 && !o.container.empty()) {
    return InvalidArgument(
        "--ps_replicas > 1 does not work with --container yet: a named container's shards are "
        "not replicated");
  }
  PST_RETURN_IF_ERROR(CadencesFromFlags(&o));
  PST_RETURN_IF_ERROR(OutputsFromFlags(&o));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("ps_wait_timeout_ms", FLAGS_ps_wait_timeout_ms));
  o.ps_wait_timeout_ms = FLAGS_ps_wait_timeout_ms;
  o.rpc_timeout_ms = FLAGS_rpc_timeout_ms;
  o.max_message_bytes = FLAGS_max_message_bytes;
  o.metrics_port = FLAGS_metrics_port;
  o.bind_host = FLAGS_bind_host;
  PST_ASSIGN_OR_RETURN(o.curve, CurveFromFlags());
  return o;
}

}  // namespace pst
