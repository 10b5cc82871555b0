#include "cli/flags.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli/help.h"
#include "cli/help_request.h"
#include "cli/unknown_flags.h"
#include "cli/version.h"
#include "kernels/kernels.h"
#include "model/model_spec.h"
#include "model/model_zoo.h"
#include "transport/bind_address.h"

namespace google {
// gflags' exit hook (exported by libgflags): lets flag errors exit with 2.
extern void (*gflags_exitfunc)(int);
}  // namespace google

// Cluster.
DEFINE_string(ps_hosts, "", "Comma-separated host:port of the ps tasks");
DEFINE_string(worker_hosts, "", "Comma-separated host:port of the worker tasks");
DEFINE_string(chief_host, "", "host:port of the chief");
DEFINE_string(bind_host, "",
              "ps and chief: the address to listen on, * for every interface "
              "(default: the address of the task's host name when this machine holds it, else *)");
DEFINE_int32(task_index, 0, "Index of this task among the tasks of its type");
DEFINE_uint64(cluster_id, 0, "Cluster id shared by all tasks (0: the chief picks one)");
// Transport.
DEFINE_int32(rpc_timeout_ms, 30000, "Deadline of every blocking request");
DEFINE_int64(max_message_bytes, int64_t{1} << 30, "Largest message accepted or sent");
DEFINE_int32(ps_threads, 2, "Request handler threads of a ps");
DEFINE_string(wire_dtype, "float32",
              "Workers: how values and gradients travel to and from the ps: float32, or bfloat16 "
              "(half the bytes; the ps keeps float32 values and takes either). One value per "
              "job: give every task the same");
DEFINE_string(curve_keys_dir, "",
              "Folder with the cluster's CURVE key (scripts/gen_keys.sh): encrypts every "
              "socket and refuses peers without the key; the same on every task");
// Training.
DEFINE_string(mode, "async", "Training mode: async (apply each gradient on arrival) or sync");
DEFINE_int32(replicas_to_aggregate, 0,
             "Sync: gradients averaged per step (0: the number of workers); "
             "workers beyond it are spares");
DEFINE_string(model, "mlp",
              "Model: mlp (input-100-classes sigmoid), mlp_relu, wide_mlp, cnn (LeNet-style, "
              "any HxWxC image)");
DEFINE_string(model_spec, "",
              "A model of your own: a file of layers, one a line (conv RxS N [stride S] "
              "[same|valid] [relu|sigmoid], maxpool 2, dense N|classes [relu|sigmoid], "
              "dropout R, learning_rate R); instead of --model");
DEFINE_string(dataset, "mnist",
              "Data format: mnist (IDX files in --data_dir), csv (--train_file, --test_file), "
              "records (fixed-length binary records: CIFAR-10's format)");
DEFINE_string(data_dir, "",
              "mnist: folder of the IDX files (default: $MNIST_DIR); records: folder of "
              "CIFAR-10's data_batch_*.bin and test_batch.bin");
DEFINE_string(train_file, "", "csv, records: the training examples (records: a comma list)");
DEFINE_string(test_file, "", "csv, records: the test examples (records: a comma list)");
DEFINE_int32(label_column, 0, "csv: the label's column, 0-based (-1: the last)");
DEFINE_int32(num_classes, 0, "csv, records: the class count (0: the largest label + 1)");
DEFINE_string(input_shape, "", "records: H,W,C of each image (default 32,32,3)");
DEFINE_int32(label_bytes, 1, "records: bytes of label before each image (the last is the class)");
DEFINE_bool(normalize, false,
            "Standardize every feature with the training split's mean and deviation");
DEFINE_string(model_file, "", "predict: the trained model (RUN_DIR/model.bin)");
DEFINE_string(output, "",
              "predict: write each example's label, predicted class and class "
              "probabilities to this CSV file");
DEFINE_string(export_onnx, "",
              "Also write the trained model as ONNX (for ONNX Runtime) to this file: the chief "
              "at the end of training, predict from --model_file (predict then predicts only "
              "when a data set is named: --dataset, --data_dir or --test_file)");
DEFINE_int64(validation_examples, 0,
             "Hold out this many training examples (the same on every task) and report "
             "the validation accuracy beside the test accuracy");
DEFINE_int32(batch_size, 100, "Examples per worker step");
DEFINE_string(optimizer, "sgd", "sgd | momentum | adagrad | adam (applied on the ps)");
DEFINE_double(learning_rate, 0,
              "Learning rate of the optimizer (0: the model's recommended rate: "
              "0.3 for the MLPs, 0.1 for cnn, 0.05 for wide_mlp)");
DEFINE_double(momentum, 0.9, "Momentum of --optimizer=momentum");
DEFINE_uint64(seed, 1, "Seed of variable initialization and data shuffling");
DEFINE_int64(train_steps, 1000, "Global steps to train");
DEFINE_int64(warmup_steps, 0, "Steps trained by worker 0 alone before the others join");
DEFINE_string(staleness_policy, "apply", "Stale gradients: apply | drop | scale");
DEFINE_int64(max_staleness, 8, "With --staleness_policy=drop: drop above this staleness");
DEFINE_string(placement, "round_robin", "Variable placement: round_robin | greedy");
DEFINE_int64(partition_bytes, 0, "Split variables larger than this over shards (0: never)");
// Chief.
DEFINE_int64(eval_every_steps, 500, "Evaluate on the test set every this many global steps");
DEFINE_int64(log_every_steps, 50,
             "Chief: a Step line, and loss, steps/s and staleness to TensorBoard, every this many "
             "global steps");
DEFINE_double(progress_every_secs, 5,
              "Chief: a progress line (step/total, rates, ETA) every this many seconds when stdout "
              "is not a terminal (on a terminal it is redrawn in place); 0: none");
DEFINE_string(run_dir, "", "Chief: folder for metrics.jsonl and model.bin");
DEFINE_string(logdir, "", "Chief: folder for TensorBoard event files (loss, accuracy, steps/s, ...)");
DEFINE_string(checkpoint_dir, "",
              "Chief and ps: checkpoint folder (shared by all hosts); restored at start");
DEFINE_int64(checkpoint_every_steps, 0, "Chief: checkpoint every this many global steps (0: off)");
DEFINE_int32(checkpoint_every_secs, 600, "Chief: checkpoint every this many seconds (0: off)");
DEFINE_int32(keep_checkpoints, 5, "Chief: how many complete checkpoints to keep");
DEFINE_int32(max_checkpoint_failures, 3,
             "Chief: checkpoints that fail in a row (e.g. a full disk) before the run stops");
DEFINE_int32(ps_wait_timeout_ms, 60000, "Chief: how long to wait for every ps at start");
// Worker.
DEFINE_int32(join_timeout_ms, 120000, "Worker: how long to wait for the chief to open training");
DEFINE_int64(worker_log_every_steps, 1000, "Worker: a Step line every this many of its own steps");
DEFINE_string(device, "cpu",
              "Worker: where the model runs: cpu, gpu:N, or a list (gpu:0,gpu:1) that splits "
              "each batch over the devices and sums their gradients before one push");
DEFINE_bool(allow_soft_placement, false,
            "Worker: fall back to the CPU (with a log line) when --device cannot be used");
DEFINE_bool(log_device_placement, false, "Worker: log the device each layer runs on");
DEFINE_double(gpu_memory_fraction, 1.0,
              "Worker: cap on the GPU memory the model takes, as a fraction of the device's");
DEFINE_string(cpu_kernels, pst::CpuKernelsName(pst::DefaultCpuKernels()),
              "Worker: kernels of --device=cpu: eigen, or onednn where built in");
DEFINE_int32(intra_op_threads, 1,
             "Worker: threads of each oneDNN kernel call; more than 1 for one worker per "
             "machine (the eigen kernels use one)");
DEFINE_int32(simulated_delay_ms, 0, "Worker: sleep this long in each step before pushing");
DEFINE_int32(heartbeat_timeout_ms, 10000, "Chief: declare a task dead after this silence");
DEFINE_int32(heartbeat_interval_ms, 0,
             "ps and workers: send the chief a heartbeat this often "
             "(0: a quarter of --heartbeat_timeout_ms)");
DEFINE_int32(stop_grace_ms, 25000,
             "ps: after SIGTERM, keep serving while the chief is in touch, so it can write "
             "its final checkpoint, for at most this long (a second signal stops at once)");
DEFINE_int32(metrics_port, 0,
             "Chief and ps: serve Prometheus metrics (GET /metrics) on this port of the "
             "task's own host (0: off); each task on a host needs its own port");

namespace pst {
namespace {

const char* g_program = "pst";

[[noreturn]] void ExitForFlags(int code) {
  std::exit(code == 0 ? 0 : kFlagErrorExitCode);
}

bool Explicit(const char* name) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name, &info) && !info.is_default;
}

Status Positive(const char* name, int64_t value) {
  if (value > 0) return Status::OK();
  return InvalidArgument("--" + std::string(name) + "=" + std::to_string(value) +
                         " must be positive");
}

// The cluster from flags, completed by TF_CONFIG where a flag was not given.
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
  const std::string ps = Explicit("ps_hosts") ? FLAGS_ps_hosts : join(tf.ps);
  const std::string workers = Explicit("worker_hosts") ? FLAGS_worker_hosts : join(tf.workers);
  const std::string chief = Explicit("chief_host") ? FLAGS_chief_host : tf.chief;
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
  if (!Explicit("task_index") && tf.task_index >= 0) {
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
  PST_ASSIGN_OR_RETURN(p.strategy, ParsePlacementStrategy(FLAGS_placement));
  if (FLAGS_partition_bytes < 0) {
    return InvalidArgument("--partition_bytes=" + std::to_string(FLAGS_partition_bytes) +
                           " must be >= 0");
  }
  p.partition_bytes = FLAGS_partition_bytes;
  return p;
}

Status CheckCommon() {
  if (FLAGS_mode != "async" && FLAGS_mode != "sync") {
    return InvalidArgument("--mode=" + FLAGS_mode + " is not one of: async, sync");
  }
  PST_RETURN_IF_ERROR(Positive("rpc_timeout_ms", FLAGS_rpc_timeout_ms));
  PST_RETURN_IF_ERROR(Positive("max_message_bytes", FLAGS_max_message_bytes));
  PST_RETURN_IF_ERROR(Positive("heartbeat_timeout_ms", FLAGS_heartbeat_timeout_ms));
  PST_RETURN_IF_ERROR(WireDTypeFromFlags().status());
  if (FLAGS_metrics_port < 0 || FLAGS_metrics_port > 65535) {
    return InvalidArgument("--metrics_port=" + std::to_string(FLAGS_metrics_port) +
                           " must be in 0..65535 (0: no metrics endpoint)");
  }
  PST_RETURN_IF_ERROR(ValidateBindHost(FLAGS_bind_host));
  if (FLAGS_heartbeat_interval_ms < 0 ||
      FLAGS_heartbeat_interval_ms >= FLAGS_heartbeat_timeout_ms) {
    return InvalidArgument("--heartbeat_interval_ms=" + std::to_string(FLAGS_heartbeat_interval_ms) +
                           " must be >= 0 and below --heartbeat_timeout_ms=" +
                           std::to_string(FLAGS_heartbeat_timeout_ms));
  }
  return Status::OK();
}

std::chrono::milliseconds HeartbeatInterval() {
  const int ms = FLAGS_heartbeat_interval_ms > 0 ? FLAGS_heartbeat_interval_ms
                                                 : std::max(1, FLAGS_heartbeat_timeout_ms / 4);
  return std::chrono::milliseconds(ms);
}

// The cluster's CURVE keys, when --curve_keys_dir is given.
StatusOr<std::optional<CurveKeys>> CurveFromFlags() {
  if (FLAGS_curve_keys_dir.empty()) return std::optional<CurveKeys>();
  auto keys = LoadCurveKeys(FLAGS_curve_keys_dir);
  if (!keys.ok()) return InvalidArgument("--curve_keys_dir: " + keys.status().message());
  return std::optional<CurveKeys>(*keys);
}

std::string DataDir() {
  if (!FLAGS_data_dir.empty()) return FLAGS_data_dir;
  const char* env = std::getenv("MNIST_DIR");
  return env ? env : "";
}

Status CheckSpec(const std::string& text, const std::string& path) {
  return ParseModelSpec(text, path).status();
}

// "32,32,3" -> {32, 32, 3}.
StatusOr<std::vector<int64_t>> ParseInputShape(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty()) return dims;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || d < 1) {
      return InvalidArgument("--input_shape=" + text + ": expected H,W,C, positive numbers");
    }
    dims.push_back(d);
  }
  if (dims.size() != 3) return InvalidArgument("--input_shape=" + text + ": expected H,W,C");
  return dims;
}

// The data and the model, as every task of a job must see them.
StatusOr<JobOptions> JobFromFlags() {
  JobOptions job;
  job.model = FLAGS_model;
  if (!FLAGS_model_spec.empty()) {
    if (Explicit("model")) return InvalidArgument("give --model or --model_spec, not both");
    std::ifstream in(FLAGS_model_spec);
    if (!in) return InvalidArgument("--model_spec=" + FLAGS_model_spec + ": cannot read the file");
    std::stringstream text;
    text << in.rdbuf();
    job.model = SpecModelName(text.str());
    // Parsed now, so a bad spec is a flag error naming the file and line.
    PST_RETURN_IF_ERROR(CheckSpec(text.str(), FLAGS_model_spec));
  }
  DataOptions& d = job.data;
  d.format = FLAGS_dataset;
  d.data_dir = DataDir();
  d.train_file = FLAGS_train_file;
  d.test_file = FLAGS_test_file;
  d.label_column = FLAGS_label_column;
  if (FLAGS_num_classes < 0) return InvalidArgument("--num_classes must be >= 0");
  d.num_classes = FLAGS_num_classes;
  PST_ASSIGN_OR_RETURN(d.input_shape, ParseInputShape(FLAGS_input_shape));
  PST_RETURN_IF_ERROR(Positive("label_bytes", FLAGS_label_bytes));
  d.label_bytes = FLAGS_label_bytes;
  d.normalize = FLAGS_normalize;
  if (FLAGS_validation_examples < 0) return InvalidArgument("--validation_examples must be >= 0");
  d.validation_examples = FLAGS_validation_examples;
  if (d.format == "mnist" && d.data_dir.empty()) {
    return InvalidArgument(
        "--data_dir is empty and MNIST_DIR is not set: get MNIST with "
        "scripts/get_mnist.sh DIR, then pass --data_dir=DIR");
  }
  return job;
}

}  // namespace

void InitProgram(Program program, int* argc, char*** argv, const char* usage) {
  g_program = (*argv)[0];
  if (const char* slash = std::strrchr(g_program, '/')) g_program = slash + 1;
  gflags::SetUsageMessage(usage);
  // Before the unknown-flag check, which would refuse -h, and instead of
  // gflags' handlers, which list glog's flags first and exit 1.
  switch (FindHelpRequest(*argc, *argv)) {
    case HelpRequest::kNone: break;
    case HelpRequest::kHelp: std::cout << ProjectHelp(program, usage) << std::flush; std::exit(0);
    case HelpRequest::kHelpFull: std::cout << FullHelp(program, usage) << std::flush; std::exit(0);
    case HelpRequest::kVersion: std::cout << VersionLine(g_program) << std::endl; std::exit(0);
  }
  if (Status names = CheckFlagNames(*argc, *argv); !names.ok()) {
    std::exit(ReportFlagError(names));
  }
  google::gflags_exitfunc = &ExitForFlags;
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

std::vector<gflags::CommandLineFlagInfo> ProjectFlags() {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  // gflags records the file that defined each flag as its __FILE__.
  flags.erase(std::remove_if(flags.begin(), flags.end(),
                             [](const auto& flag) { return flag.filename != __FILE__; }),
              flags.end());
  return flags;
}

int ReportFlagError(const Status& status) {
  std::cerr << g_program << ": " << status.message() << std::endl;
  return kFlagErrorExitCode;
}

StatusOr<PsOptions> PsOptionsFromFlags() {
  PST_RETURN_IF_ERROR(CheckCommon());
  PsOptions o;
  PST_ASSIGN_OR_RETURN(o.cluster, ClusterFromFlags(TaskType::kPs, &o.task_index));
  PST_RETURN_IF_ERROR(Positive("ps_threads", FLAGS_ps_threads));
  o.num_threads = FLAGS_ps_threads;
  o.max_message_bytes = FLAGS_max_message_bytes;
  o.cluster_id = FLAGS_cluster_id;
  o.checkpoint_dir = FLAGS_checkpoint_dir;
  o.heartbeat_interval = HeartbeatInterval();
  o.metrics_port = FLAGS_metrics_port;
  o.bind_host = FLAGS_bind_host;
  if (FLAGS_stop_grace_ms < 0) return InvalidArgument("--stop_grace_ms must be >= 0");
  o.stop.grace = std::chrono::milliseconds(FLAGS_stop_grace_ms);
  PST_ASSIGN_OR_RETURN(o.curve, CurveFromFlags());
  return o;
}

StatusOr<WorkerOptions> WorkerOptionsFromFlags() {
  PST_RETURN_IF_ERROR(CheckCommon());
  WorkerOptions o;
  PST_ASSIGN_OR_RETURN(o.cluster, ClusterFromFlags(TaskType::kWorker, &o.task_index));
  o.cluster_id = FLAGS_cluster_id;
  o.sync = FLAGS_mode == "sync";
  if (FLAGS_simulated_delay_ms < 0) return InvalidArgument("--simulated_delay_ms must be >= 0");
  o.simulated_delay_ms = FLAGS_simulated_delay_ms;
  PST_ASSIGN_OR_RETURN(o.job, JobFromFlags());
  o.device = FLAGS_device;
  o.allow_soft_placement = FLAGS_allow_soft_placement;
  o.log_device_placement = FLAGS_log_device_placement;
  if (!(FLAGS_gpu_memory_fraction > 0 && FLAGS_gpu_memory_fraction <= 1)) {
    return InvalidArgument("--gpu_memory_fraction=" + std::to_string(FLAGS_gpu_memory_fraction) +
                           " must be in (0, 1]");
  }
  o.gpu_memory_fraction = FLAGS_gpu_memory_fraction;
  PST_ASSIGN_OR_RETURN(o.cpu_kernels, ParseCpuKernels(FLAGS_cpu_kernels));
  PST_RETURN_IF_ERROR(Positive("intra_op_threads", FLAGS_intra_op_threads));
  o.intra_op_threads = FLAGS_intra_op_threads;
  PST_RETURN_IF_ERROR(Positive("batch_size", FLAGS_batch_size));
  o.batch_size = FLAGS_batch_size;
  o.seed = FLAGS_seed;
  if (FLAGS_warmup_steps < 0) return InvalidArgument("--warmup_steps must be >= 0");
  o.warmup_steps = FLAGS_warmup_steps;
  PST_RETURN_IF_ERROR(Positive("worker_log_every_steps", FLAGS_worker_log_every_steps));
  o.log_every_steps = FLAGS_worker_log_every_steps;
  PST_ASSIGN_OR_RETURN(o.placement, PlacementFromFlags());
  o.rpc_timeout_ms = FLAGS_rpc_timeout_ms;
  PST_RETURN_IF_ERROR(Positive("join_timeout_ms", FLAGS_join_timeout_ms));
  o.join_timeout_ms = FLAGS_join_timeout_ms;
  o.heartbeat_interval = HeartbeatInterval();
  o.max_message_bytes = FLAGS_max_message_bytes;
  PST_ASSIGN_OR_RETURN(o.wire_dtype, WireDTypeFromFlags());
  PST_ASSIGN_OR_RETURN(o.curve, CurveFromFlags());
  return o;
}

StatusOr<ChiefOptions> ChiefOptionsFromFlags() {
  PST_RETURN_IF_ERROR(CheckCommon());
  ChiefOptions o;
  int index = 0;
  PST_ASSIGN_OR_RETURN(o.cluster, ClusterFromFlags(TaskType::kChief, &index));
  o.cluster_id = FLAGS_cluster_id;
  if (FLAGS_mode == "sync") {
    const int workers = static_cast<int>(o.cluster.workers.size());
    const int n = FLAGS_replicas_to_aggregate == 0 ? workers : FLAGS_replicas_to_aggregate;
    if (n < 1 || n > workers) {
      return InvalidArgument("--replicas_to_aggregate=" + std::to_string(FLAGS_replicas_to_aggregate) +
                             " must be in 1.." + std::to_string(workers) + " (the number of workers)");
    }
    o.shard.mode = TrainingMode::kSync;
    o.shard.replicas_to_aggregate = n;
  }
  o.heartbeat_timeout_ms = FLAGS_heartbeat_timeout_ms;
  PST_ASSIGN_OR_RETURN(o.job, JobFromFlags());
  o.seed = FLAGS_seed;
  o.shard.optimizer.name = FLAGS_optimizer;
  if (FLAGS_learning_rate < 0) {
    return InvalidArgument("--learning_rate=" + std::to_string(FLAGS_learning_rate) +
                           " must be >= 0 (0: the model's recommended rate)");
  }
  o.shard.optimizer.learning_rate = static_cast<float>(FLAGS_learning_rate);
  if (FLAGS_learning_rate == 0) {
    PST_ASSIGN_OR_RETURN(o.shard.optimizer.learning_rate, RecommendedLearningRate(o.job.model));
  }
  o.shard.optimizer.momentum = static_cast<float>(FLAGS_momentum);
  PST_ASSIGN_OR_RETURN(o.shard.staleness_policy, ParseStalenessPolicy(FLAGS_staleness_policy));
  if (FLAGS_max_staleness < 0) return InvalidArgument("--max_staleness must be >= 0");
  o.shard.max_staleness = FLAGS_max_staleness;
  PST_ASSIGN_OR_RETURN(o.placement, PlacementFromFlags());
  PST_RETURN_IF_ERROR(Positive("train_steps", FLAGS_train_steps));
  o.train_steps = FLAGS_train_steps;
  if (FLAGS_eval_every_steps < 0) return InvalidArgument("--eval_every_steps must be >= 0");
  o.eval_every_steps = FLAGS_eval_every_steps;
  PST_RETURN_IF_ERROR(Positive("log_every_steps", FLAGS_log_every_steps));
  o.log_every_steps = FLAGS_log_every_steps;
  if (!(FLAGS_progress_every_secs >= 0))
    return InvalidArgument("--progress_every_secs must be >= 0");
  o.progress_every_secs = FLAGS_progress_every_secs;
  o.run_dir = FLAGS_run_dir;
  o.export_onnx = FLAGS_export_onnx;
  o.logdir = FLAGS_logdir;
  o.checkpoint_dir = FLAGS_checkpoint_dir;
  if (FLAGS_checkpoint_every_steps < 0 || FLAGS_checkpoint_every_secs < 0) {
    return InvalidArgument("--checkpoint_every_steps and --checkpoint_every_secs must be >= 0");
  }
  o.checkpoint_every_steps = FLAGS_checkpoint_every_steps;
  o.checkpoint_every_secs = FLAGS_checkpoint_every_secs;
  PST_RETURN_IF_ERROR(Positive("keep_checkpoints", FLAGS_keep_checkpoints));
  o.keep_checkpoints = FLAGS_keep_checkpoints;
  PST_RETURN_IF_ERROR(Positive("max_checkpoint_failures", FLAGS_max_checkpoint_failures));
  o.max_checkpoint_failures = FLAGS_max_checkpoint_failures;
  PST_RETURN_IF_ERROR(Positive("ps_wait_timeout_ms", FLAGS_ps_wait_timeout_ms));
  o.ps_wait_timeout_ms = FLAGS_ps_wait_timeout_ms;
  o.rpc_timeout_ms = FLAGS_rpc_timeout_ms;
  o.max_message_bytes = FLAGS_max_message_bytes;
  o.metrics_port = FLAGS_metrics_port;
  o.bind_host = FLAGS_bind_host;
  PST_ASSIGN_OR_RETURN(o.curve, CurveFromFlags());
  return o;
}

StatusOr<PredictOptions> PredictOptionsFromFlags() {
  PredictOptions o;
  if (FLAGS_model_file.empty()) return InvalidArgument("--model_file is empty: give RUN_DIR/model.bin");
  o.model_file = FLAGS_model_file;
  o.output = FLAGS_output;
  o.export_onnx = FLAGS_export_onnx;
  o.predict =
      o.export_onnx.empty() || Explicit("dataset") || Explicit("data_dir") || Explicit("test_file");
  if (!o.predict && !o.output.empty()) {
    return InvalidArgument(
        "--output needs a data set to predict: give --dataset, --data_dir "
        "or --test_file");
  }
  if (!o.predict) return o;  // only exporting: no data set to read
  PST_ASSIGN_OR_RETURN(JobOptions job, JobFromFlags());
  o.data = job.data;
  return o;
}

}  // namespace pst
