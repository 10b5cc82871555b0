#include "cli/flags.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/help.h"
#include "cli/help_request.h"
#include "cli/unknown_flags.h"
#include "cli/version.h"

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
DEFINE_string(container, "",
              "Chief, worker: keep this job's variables, optimizer slots, global step and sync "
              "state in this named container on the ps, so several jobs share one ps cluster "
              "(empty: the default container)");
DEFINE_bool(reset_container, false,
            "Chief: discard what --container holds on the ps (another job's too) before "
            "initializing it");
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
DEFINE_string(shm, "auto",
              "Tensor payloads between tasks on one host: auto (through shared memory when the "
              "peer's address is this host's, else TCP), or off (TCP only; PST_SHM=off in the "
              "environment does the same when --shm is not given)");
DEFINE_string(curve_keys_dir, "",
              "Folder with the cluster's CURVE key (scripts/gen_keys.sh): encrypts every "
              "socket and refuses peers without the key; the same on every task");
// Training.
DEFINE_string(mode, "async",
              "Training mode: async (apply each gradient on arrival), sync, or ssp (async with "
              "bounded staleness: --staleness_bound)");
DEFINE_int64(staleness_bound, 3,
             "SSP: a worker may start a step at most this many steps ahead of the slowest live "
             "worker (0: lock-step)");
DEFINE_string(
    replicas_to_aggregate, "0",
    "Sync: the quorum, gradients averaged per step (0: the number of workers); workers "
    "beyond it are spares. auto: the chief picks it each step from when the workers' gradients "
    "arrived, for the most batches per second, and logs each change");
DEFINE_string(model, "mlp",
              "Model: mlp (input-100-classes sigmoid), mlp_relu, wide_mlp, cnn (LeNet-style, "
              "any HxWxC image); click models for sparse data, tables on the ps, CPU only "
              "(docs/SPARSE.md): wide_deep, fm, deepfm, dcn_v2, dlrm");
DEFINE_string(model_spec, "",
              "A model of your own: a file of layers, one a line (conv RxS N [stride S] "
              "[same|valid] [relu|sigmoid], maxpool 2, dense N|classes [relu|sigmoid], "
              "dropout R), and learning_rate, lr_schedule, weight_decay and augment lines for "
              "those flags left at their defaults; instead of --model. A click model's spec "
              "starts with 'embedding DIM [combiner=sum|mean|sqrtn]', then parts: 'wide', "
              "'fm', 'cross L [rank=R] [parallel]', 'dot' with 'bottom N relu' lines, "
              "'dense N relu' lines, 'batchnorm', 'dropout R', and 'dense classes'; "
              "'optimizer' and 'learning_rate' lines (docs/SPARSE.md)");
DEFINE_string(dataset, "mnist",
              "Data format: mnist (IDX files in --data_dir), csv (--train_file, --test_file), "
              "records (fixed-length binary records: CIFAR-10's format), criteo (Criteo's click "
              "log: label, 13 integer and 26 categorical fields, tab-separated, plain or gzip), "
              "libsvm (label index:value ...), libffm (label field:id:value ...; several "
              "entries of one field: multi-hot)");
DEFINE_string(features, "",
              "Click data (criteo, libffm, libsvm): a feature file, one column a line: 'NAME "
              "categorical|multi_hot|numeric SOURCE [table=T buckets=N min_count=K dim=D "
              "combiner=sum|mean|sqrtn max_length=N weighted log1p bucketize=E1,E2,...]'. Every "
              "data set read goes through it; the click model's fields, dense features, table "
              "rows, dim and combiners come from it (--embedding_rows, if given, must equal its "
              "rows). docs/SPARSE.md, examples/criteo.features");
DEFINE_bool(criteo_integer_fields, true,
            "criteo without --features: each of the 13 integers also as a categorical field "
            "(its bucket floor(4 log(1 + x)); 39 fields in all), beside its log(1 + x) dense "
            "input: a model learns effects of a count that are not smooth. false: the 26 "
            "categorical fields alone (models trained before it existed)");
DEFINE_string(data_dir, "",
              "mnist: folder of the IDX files (default: $MNIST_DIR); records: folder of "
              "CIFAR-10's data_batch_*.bin and test_batch.bin");
DEFINE_string(train_file, "",
              "csv, records, criteo, libsvm, libffm: the training examples (records: a comma "
              "list)");
DEFINE_string(train_files, "",
              "With --follow: a pattern (*, ?, [...]) naming the training files as they "
              "appear, e.g. 'logs/part-*'; each is trained once, oldest name first. A file must "
              "appear whole: write it under another name and rename it (docs/STREAMING.md)");
DEFINE_bool(follow, false,
            "Click models, --mode=async: train on the files of --train_files as they appear, "
            "one pass, until --train_steps (0: until SIGTERM, which ends the run with its "
            "checkpoint and model.bin)");
DEFINE_string(test_file, "",
              "csv, records, criteo, libsvm, libffm: the test examples (records: a comma list)");
DEFINE_int64(embedding_rows, 1000000,
             "Click models: rows of each fixed embedding table (hash buckets: a key maps to row "
             "key mod N), partitioned over every ps by row id mod the number of ps");
DEFINE_int64(embedding_capacity, 0,
             "Click models: dynamic embedding tables instead of fixed ones (any 64-bit key), "
             "each holding at most this many rows per ps: a row is created on a key's first "
             "pull and the least recently used row is evicted when the table is full");
DEFINE_string(embedding_storage, "ram",
              "Chief and ps, dynamic tables (--embedding_capacity): ram (every row in RAM) or "
              "disk:DIR (rows in RocksDB under DIR, each ps's own local folder, the most "
              "recently used --embedding_cache_rows in RAM; --embedding_capacity then bounds "
              "the rows on disk). The chief's choice goes to every ps, and each ps keeps its "
              "tables in the DIR of its own flag (docs/SPARSE.md, Tables larger than memory)");
DEFINE_int64(embedding_cache_rows, 1000000,
             "Chief, --embedding_storage=disk:DIR: rows of each table a ps keeps in RAM (the "
             "least recently pulled or applied go back to disk)");
DEFINE_int64(embedding_min_count, 1,
             "Chief, dynamic tables: a key gets a row only once pulls have seen it this many "
             "times; until then it reads as zeros and its gradient is dropped");
DEFINE_double(embedding_l2, 0,
              "Chief, click models: L2 on the embedding rows a batch touches, applied lazily on "
              "the ps: each pushed row gradient gains L2 * row (the gradient of 0.5 * L2 * "
              "|row|^2) before the optimizer; rows no batch touches are left alone (an L2 over "
              "a whole 10M-row table each step would cost the table). Dense variables decay "
              "through --weight_decay");
DEFINE_int32(label_column, 0, "csv: the label's column, 0-based (-1: the last)");
DEFINE_int32(num_classes, 0, "csv, records: the class count (0: the largest label + 1)");
DEFINE_string(input_shape, "",
              "records: H,W,C of each image (default 32,32,3), or D for D plain features");
DEFINE_int32(label_bytes, 1, "records: bytes of label before each image (the last is the class)");
DEFINE_string(record_dtype, "uint8",
              "records: how each value is stored: uint8 (a byte, scaled to [0,1], CIFAR-10's) "
              "or float32 (4 bytes, little-endian, taken as is; pstrain.data.write_records)");
DEFINE_bool(normalize, false,
            "Standardize every feature with the training split's mean and deviation");
DEFINE_string(augment, "",
              "Worker: augment the training batches of images (never validation or test "
              "data): a comma list of crop (a random crop after zero padding of 4 pixels), "
              "crop:PAD (of PAD pixels) and flip (horizontal; off unless named: mirrored "
              "digits are other digits), e.g. crop,flip; seeded by --seed");
DEFINE_string(model_file, "", "predict: the trained model (RUN_DIR/model.bin)");
DEFINE_string(ensemble, "",
              "predict: trained models (m1.bin,m2.bin,...) to predict with together, instead "
              "of --model_file: each member's and the mean of their class probabilities' "
              "validation and test accuracy; --device=D1,D2,... puts each on its own device");
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
DEFINE_string(optimizer, "sgd",
              "sgd | momentum | adagrad | adam | ftrl (applied on the ps; embedding tables "
              "lazily, only the rows a gradient touches; adam on tables is LazyAdam). Unset, a "
              "click model trains with its own: adam 0.001 (a spec's 'optimizer' line)");
DEFINE_double(learning_rate, 0,
              "Learning rate of the optimizer (0: the model's recommended rate: "
              "0.3 for the MLPs, 0.1 for cnn, 0.05 for wide_mlp; a click model's for its "
              "optimizer: adam 0.001, adagrad, ftrl and sgd 0.05, momentum 0.01)");
DEFINE_string(lr_schedule, "constant",
              "Chief: the learning rate over the global steps, computed on the ps: constant | "
              "step (* --lr_decay_rate every --lr_decay_steps) | exponential (* "
              "--lr_decay_rate^(step / --lr_decay_steps)) | cosine (down to --lr_min over "
              "--lr_decay_steps steps) | plateau (* --lr_decay_rate each time the validation "
              "loss stalls, decided by the chief at its evaluations: needs "
              "--validation_examples)");
DEFINE_int64(lr_decay_steps, 0,
             "Chief: --lr_schedule=step, exponential: the steps of one --lr_decay_rate factor; "
             "cosine: the steps of the whole decay. Unset (0): cosine and exponential decay over "
             "the whole run (--train_steps); step needs it > 0");
DEFINE_double(lr_decay_rate, 0.1,
              "Chief: --lr_schedule=step, exponential: the decay factor; plateau: the factor "
              "of one lowering, in (0, 1)");
DEFINE_double(lr_min, 0, "Chief: the floor of the scheduled learning rate, in [0, learning rate]");
DEFINE_int64(lr_warmup_steps, 0,
             "Chief: raise the learning rate linearly over the first this many global steps "
             "(step s runs at (s+1)/N of the scheduled rate). Independent of --warmup_steps "
             "(worker 0 training alone at the start): both count global steps from 0, so "
             "with both, worker 0's steps under --lr_warmup_steps run at the warmed-up rate");
DEFINE_int32(lr_plateau_patience, 5,
             "Chief: --lr_schedule=plateau: lower the rate after this many evaluations in a "
             "row without a new best validation loss (>= 1)");
DEFINE_double(lr_plateau_min_delta, 0,
              "Chief: --lr_schedule=plateau: a new best validation loss is below the best by "
              "more than this (>= 0)");
DEFINE_int32(lr_plateau_cooldown, 0,
             "Chief: --lr_schedule=plateau: evaluations after a lowering that count for "
             "nothing (>= 0)");
DEFINE_double(weight_decay, 0,
              "Chief: decoupled weight decay (AdamW-style, on the ps): each update also does "
              "w -= lr * W * w with the scheduled rate; biases and other rank-1 variables and "
              "embedding tables are not decayed (0: none)");
DEFINE_double(clip_norm, 0,
              "Worker: clip each step's gradient by its global norm over every variable and "
              "table row, as tf.clip_by_global_norm (0: no clipping)");
DEFINE_double(momentum, 0.9, "Momentum of --optimizer=momentum");
DEFINE_double(l1, 0, "--optimizer=ftrl: L1 regularization strength (makes weights exactly 0)");
DEFINE_double(l2, 0, "--optimizer=ftrl: L2 regularization strength");
DEFINE_uint64(seed, 1, "Seed of variable initialization and data shuffling");
DEFINE_int64(train_steps, 1000, "Global steps to train");
DEFINE_int64(warmup_steps, 0, "Steps trained by worker 0 alone before the others join");
DEFINE_string(staleness_policy, "apply", "Stale gradients: apply | drop | scale");
DEFINE_int64(max_staleness, 8, "With --staleness_policy=drop: drop above this staleness");
DEFINE_string(placement, "round_robin", "Variable placement: round_robin | greedy");
DEFINE_int64(partition_bytes, 0, "Split variables larger than this over shards (0: never)");
DEFINE_int32(ps_replicas, 1,
             "Copies of each ps shard: a primary and R-1 backups on the next ps tasks; a lost "
             "ps then costs no update and no rollback (chief and workers; 1..ps count)");
// Chief.
DEFINE_int64(eval_every_steps, 500,
             "Chief: evaluate on the test set each time the global step has passed a multiple of "
             "this many steps (counted from the step training opened at) since the last "
             "evaluation, at the step the chief sees; at most one evaluation per look of the "
             "chief (every 20 ms), however many multiples the step passed between two looks; "
             "and once at the end (0: only at the end)");
DEFINE_int32(early_stopping_patience, 0,
             "Chief, with --validation_examples: stop training after this many evaluations in a "
             "row without a better validation score (accuracy; AUC for click models); the best "
             "model is kept as best_model.bin in --run_dir either way (0: never stop early)");
DEFINE_int64(log_every_steps, 50,
             "Chief: a Step line, and loss, steps/s and staleness to TensorBoard, every this many "
             "global steps (at most one per look of the chief, as --eval_every_steps)");
DEFINE_double(progress_every_secs, 5,
              "Chief: a progress line (step/total, rates, ETA) every this many seconds when stdout "
              "is not a terminal (on a terminal it is redrawn in place); 0: none");
DEFINE_string(run_dir, "", "Chief: folder for metrics.jsonl and model.bin");
DEFINE_int32(export_every_secs, 0,
             "Chief: every N seconds of training, write the model's changes since the last "
             "export to --export_dir (a delta: the dense variables and the table rows changed), "
             "or the whole model (a base, readable as model.bin); 0: no export "
             "(docs/STREAMING.md)");
DEFINE_string(export_dir, "",
              "Chief, with --export_every_secs: the folder of the exports (default: "
              "--run_dir/export). predict: instead of --model_file, the model of that folder's "
              "newest export (base and deltas; --export_step)");
DEFINE_int64(export_step, -1,
             "predict, with --export_dir: the model as exported at this global step (-1: the "
             "newest)");
DEFINE_int32(export_base_every, 10,
             "Chief, with --export_every_secs: a whole base after this many deltas");
DEFINE_int32(keep_export_bases, 2,
             "Chief, with --export_every_secs: bases kept, each with its deltas (older ones are "
             "removed)");
DEFINE_string(logdir, "",
              "Chief: folder for TensorBoard event files (loss, accuracy, steps/s, ...)");
DEFINE_string(checkpoint_dir, "",
              "Chief and ps: checkpoint folder (shared by all hosts); restored at start, "
              "resharded when written over another number of ps");
DEFINE_int64(checkpoint_every_steps, 0, "Chief: checkpoint every this many global steps (0: off)");
DEFINE_int32(checkpoint_every_secs, 600, "Chief: checkpoint every this many seconds (0: off)");
DEFINE_int32(keep_checkpoints, 5, "Chief: how many complete checkpoints to keep");
DEFINE_int32(max_checkpoint_failures, 3,
             "Chief: checkpoints that fail in a row (e.g. a full disk) before the run stops");
DEFINE_int32(ps_wait_timeout_ms, 60000, "Chief: how long to wait for every ps at start");
// Worker.
DEFINE_int32(join_timeout_ms, 120000,
             "Worker: how long to wait for the chief to open training. Chief: how long "
             "training may stay open with no worker alive before the run fails");
DEFINE_int64(worker_log_every_steps, 1000, "Worker: a Step line every this many of its own steps");
DEFINE_string(device, "cpu",
              "Worker: where the model runs: cpu, gpu:N, or a list (gpu:0,gpu:1) that splits "
              "each batch over the devices and sums their gradients before one push; "
              "predict --ensemble: one device per member, or one for all");
DEFINE_int32(model_parallel, 1,
             "Worker: cut the model's layer stack into this many pipeline stages, one "
             "thread (device) each; --device names one device for all stages or one per "
             "stage. 1: no model parallelism");
DEFINE_int32(micro_batches, 4,
             "Worker with --model_parallel > 1: the most micro-batches a batch is cut into "
             "for the pipeline");
DEFINE_bool(allow_soft_placement, false,
            "Worker: fall back to the CPU (with a log line) when --device cannot be used");
DEFINE_bool(log_device_placement, false, "Worker: log the device each layer runs on");
DEFINE_double(gpu_memory_fraction, 1.0,
              "Worker: cap on the GPU memory the model takes, as a fraction of the device's");
// "auto" is DefaultCpuKernels() (kernels/kernels.h), named so that this
// file links no kernels.
DEFINE_string(cpu_kernels, "auto",
              "Worker: kernels of --device=cpu: onednn (where built in), eigen (the reference), "
              "or auto: onednn where built in, else eigen");
DEFINE_int32(intra_op_threads, 1,
             "Worker: threads of each oneDNN kernel call; more than 1 for one worker per "
             "machine (the eigen kernels use one)");
DEFINE_string(overlap, "on",
              "Worker, async mode: on: a step's gradients are pushed as backprop makes them "
              "(see --push_bucket_bytes), and the push is acknowledged while the next step "
              "computes (under --ps_replicas, once every backup holds it); off: each step "
              "pushes once computed and waits for the acknowledgement (the order before, for "
              "comparison)");
DEFINE_int64(push_bucket_bytes, 1 << 20,
             "Worker, --overlap: ready gradients go out once they hold this many bytes (the "
             "last layer's collect until then; the step's last always goes); 0: each layer's "
             "as soon as backprop makes it");
DEFINE_int32(simulated_delay_ms, 0, "Worker: sleep this long in each step before pushing");
DEFINE_int64(simulated_delay_from_step, 0,
             "Worker: --simulated_delay_ms starts at this step of the worker's own (a straggler "
             "that turns slow mid-run)");
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

[[noreturn]] void ExitForFlags(int code) { std::exit(code == 0 ? 0 : kFlagErrorExitCode); }

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

bool FlagGiven(const char* name) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name, &info) && !info.is_default;
}

Status CheckPositiveFlag(const char* name, int64_t value) {
  if (value > 0) return Status::OK();
  return InvalidArgument("--" + std::string(name) + "=" + std::to_string(value) +
                         " must be positive");
}

}  // namespace pst
