// bench_transport: what the parameter-server transport costs, measured against
// bare ZeroMQ and against training in one process (DESIGN.md section 12).
//
// Measures, in one run, on 127.0.0.1 TCP loopback:
//  1. Framework: an in-process ps (an RpcServer with a PsService, wired as in
//     ps/ps_task.cc minus the chief's ShardAppliedNotifier; its own ZeroMQ context;
//     async mode) holding one float32 variable per size (default 4 KiB,
//     1 MiB, 4 MiB; SGD, one shard), and a PsClient (its own context) doing
//     rounds of Pull(variable) then Push(a gradient of the same shape), one
//     request in flight. Reports payload bytes/s ((pulled + pushed bytes) /
//     time) and the latency of a pull, a push and a round (mean, p50, p99).
//  1c. The framework rounds again with the payloads through shared memory
//     (a second PsClient on a ZmqTransport with --shm=auto; the rounds of 1
//     go over TCP): headers on ZeroMQ, tensors through the rings.
//  2. Bare ZeroMQ: a ROUTER server thread and a DEALER client doing the same
//     exchanges ("pull" = small request answered by a large reply, "push" =
//     large request answered by a small reply); the large frames are sent
//     zero-copy from pre-allocated buffers and nobody touches the payload.
//  3. Training: examples/s of "1 ps + 1 worker" (an in-process ps over TCP,
//     Model::ComputeGradients -> PushThenPull (the push, and the next step's
//     pull of all model variables right behind it), as in async
//     worker/worker_task.cc) vs the same model trained in one process
//     (ComputeGradients, then the SGD optimizer applied to the local params),
//     mlp_relu, batch 100, the same batches in the same order. MNIST from
//     $MNIST_DIR when set, otherwise synthetic random batches.
//  1b. The same rounds with --wire_dtype=bfloat16 (a second PsClient on the
//     same ps), alternated with the float32 ones: wire bytes per round and
//     payload/s relative to float32, and the conversion's own speed (GB/s
//     of float32 narrowed and widened, against a memcpy).
// Each configuration gets a warm-up, then --repeats timed repeats of
// --seconds_per_config / --repeats seconds each; a repeat alternates the
// configuration and its baseline in --slices short slices so that load from
// elsewhere hits both alike. Tables show the median repeat.
// The last line of the output is "ratio_vs_zmq_4MiB: X", framework bytes/s
// over bare ZeroMQ bytes/s at 4 MiB.
//
// This file holds the flags and runs the parts in order; each part is one
// file of bench/transport/ (report.cc prints the tables), and the ps is
// bench/in_process_ps.h.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_main.h"
#include "bench/bench_timing.h"
#include "bench/transport/conversion_speed.h"
#include "bench/transport/pull_push_rounds.h"
#include "bench/transport/report.h"
#include "bench/transport/timing_plan.h"
#include "bench/transport/training_comparison.h"
#include "common/clock.h"

DEFINE_double(seconds_per_config, 1.5,
              "Timed seconds per configuration, split over --repeats repeats");
DEFINE_int32(repeats, 3, "Timed repeats per configuration; the median is reported");
DEFINE_string(sizes, "4096,1048576,4194304",
              "Comma-separated variable sizes in bytes (multiples of 4); "
              "4194304 is added when missing (it gives the last line)");
DEFINE_int32(slices, 5,
             "Each repeat alternates framework and baseline in this many "
             "slices");
DEFINE_int32(ps_threads, 2, "Handler threads of the in-process ps (the ps default)");
DEFINE_string(train_model, "mlp_relu", "Model of the training section");
DEFINE_int32(train_batch_size, 100, "Batch size of the training section");
DEFINE_int32(train_batches, 50, "Distinct batches prepared for the training section (cycled)");

namespace pst {
namespace {

constexpr size_t k4MiB = size_t{4} << 20;

std::vector<size_t> ParseSizes(const std::string& text) {
  std::vector<size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const long long v = std::atoll(item.c_str());
    CHECK(v > 0 && v % 4 == 0) << "--sizes: '" << item << "' is not a positive multiple of 4";
    sizes.push_back(static_cast<size_t>(v));
  }
  if (std::find(sizes.begin(), sizes.end(), k4MiB) == sizes.end()) sizes.push_back(k4MiB);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void PrintWhatIsMeasured(const TimingPlan& plan) {
  std::printf(
      "bench_transport: ps transport vs bare ZeroMQ, and 1 ps + 1 "
      "worker vs one process\n");
  std::printf("measures (127.0.0.1 TCP, one request in flight):\n");
  std::printf(
      "  1. framework: in-process ps (RpcServer + PsService, %d "
      "handler threads)\n",
      FLAGS_ps_threads);
  std::printf(
      "     + PsClient: Pull(var) then Push(grad of var's shape); "
      "SGD, 1 shard\n");
  std::printf(
      "  2. bare ZeroMQ: ROUTER thread + DEALER; pull = 8 B request "
      "-> payload;\n");
  std::printf(
      "     push = 8 B + payload -> 8 B; payload frames zero-copy, "
      "never touched\n");
  std::printf(
      "  3. training: %s, batch %d: examples/s of 1 ps + 1 worker "
      "(ComputeGradients\n",
      FLAGS_train_model.c_str(), FLAGS_train_batch_size);
  std::printf(
      "     -> push + next pull back to back) vs the model + SGD in one "
      "process\n");
  std::printf(
      "method: per configuration a %.2f s warm-up, then %d repeats "
      "of %.2f s,\n",
      plan.warmup_s, plan.repeats, plan.seconds_per_repeat);
  std::printf(
      "  each alternating with its baseline in %d slices; the median "
      "repeat is\n",
      plan.slices);
  std::printf(
      "  shown. MB = 1e6 bytes; bytes/s counts payload pulled + "
      "pushed.\n\n");
}

int Main() {
  const auto program_start = SteadyClock().Now();
  const std::vector<size_t> sizes = ParseSizes(FLAGS_sizes);
  TimingPlan plan;
  plan.repeats = std::max(1, FLAGS_repeats);
  plan.slices = std::max(1, FLAGS_slices);
  plan.seconds_per_repeat = FLAGS_seconds_per_config / plan.repeats;
  plan.warmup_s = std::max(0.02, 0.1 * plan.seconds_per_repeat);
  PrintWhatIsMeasured(plan);
  std::fflush(stdout);

  const std::vector<PullPushResult> rounds = RunPullPushRounds(sizes, plan, FLAGS_ps_threads);
  const ConversionSpeed conversion = MeasureConversionSpeed(sizes.back());
  PrintPullPushTables(rounds, conversion, plan.repeats);
  std::fflush(stdout);

  TrainingOptions training_options;
  training_options.model = FLAGS_train_model;
  training_options.batch_size = FLAGS_train_batch_size;
  training_options.batches = FLAGS_train_batches;
  training_options.ps_threads = FLAGS_ps_threads;
  const TrainingResult training = RunTrainingComparison(training_options, plan);
  PrintTrainingTable(training_options, training);

  std::printf("\ntook %.1f s\n", Seconds(SteadyClock().Now() - program_start));
  // ParseSizes always adds 4 MiB.
  const auto at_4mib = std::find_if(rounds.begin(), rounds.end(),
                                    [](const PullPushResult& r) { return r.bytes == k4MiB; });
  std::printf("ratio_vs_zmq_4MiB: %.2f\n", FrameworkOverBare(*at_4mib));
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  FLAGS_minloglevel = 1;  // the ps logs its init at INFO; --minloglevel=0 shows it
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_transport [--seconds_per_config=S] [--sizes=B,B,...]: ps "
                           "pull/push vs bare "
                           "ZeroMQ on loopback, 1 ps + 1 worker training vs one process",
                           "bench/bench_transport.cc")) {
    return 0;
  }
  return pst::Main();
}
