#include "bench/transport/report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "bench/bench_stats.h"
#include "bench/in_process_ps.h"

namespace pst {
namespace {

std::string Join(const std::vector<double>& v, double scale, const char* format) {
  std::string s;
  char buf[64];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, format, x * scale);
    s += (s.empty() ? "" : " ") + std::string(buf);
  }
  return s;
}

// "mean p50 p99", each 7 wide.
std::string LatencyColumns(const Latency& l) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%7.1f %7.1f %7.1f", l.mean, l.p50, l.p99);
  return buf;
}

void PrintThroughputTable(const std::vector<PullPushResult>& results) {
  std::printf("== transport: pull+push rounds ==\n");
  std::printf("%-8s | %14s | %8s | %13s | %5s | %9s | %18s | %12s | %13s\n", "size",
              "framework MB/s", "shm MB/s", "bare zmq MB/s", "ratio", "shm ratio",
              "framework round us", "shm round us", "bare round us");
  for (const PullPushResult& r : results) {
    const Repeat fw = MedianRepeat(r.framework), bare = MedianRepeat(r.bare),
                 shm = MedianRepeat(r.shm);
    std::printf("%-8s | %14.0f | %8.0f | %13.0f | %5.2f | %9.2f | %18.1f | %12.1f | %13.1f\n",
                SizeLabel(r.bytes).c_str(), fw.bytes_per_s / 1e6, shm.bytes_per_s / 1e6,
                bare.bytes_per_s / 1e6, FrameworkOverBare(r), shm.bytes_per_s / bare.bytes_per_s,
                fw.round.mean, shm.round.mean, bare.round.mean);
  }
  std::printf(
      "(framework: over TCP, --shm=off; shm: payloads through shared memory; ratios over bare "
      "zmq)\n");
}

void PrintBFloat16Table(const std::vector<PullPushResult>& results,
                        const ConversionSpeed& conversion) {
  std::printf("\n== --wire_dtype=bfloat16 vs float32: pull+push rounds ==\n");
  std::printf("%-8s | %16s | %15s | %16s | %15s\n", "size", "bf16 wire bytes", "bf16 round us",
              "float32 round us", "bf16_vs_float32");
  for (const PullPushResult& r : results) {
    const Repeat fw = MedianRepeat(r.framework), narrow = MedianRepeat(r.bf16);
    std::printf("%-8s | %15.2fx | %15.1f | %16.1f | %15.2f\n", SizeLabel(r.bytes).c_str(),
                r.bf16_wire_ratio, narrow.round.mean, fw.round.mean,
                narrow.bytes_per_s / fw.bytes_per_s);
  }
  std::printf("(bf16_vs_float32: float32-equivalent payload per second, bfloat16 over float32)\n");
  std::printf("conversion of %s, GB/s of float32: narrow %.1f, widen %.1f, memcpy %.1f\n",
              SizeLabel(conversion.bytes).c_str(), conversion.narrow, conversion.widen,
              conversion.memcpy);
  std::printf(
      "fused, GB/s of float32 (ratio to two passes): worker check+narrow %.1f -> "
      "narrow-and-check %.1f (%.2fx); ps widen+sgd %.1f -> widen-and-apply %.1f (%.2fx)\n",
      conversion.check_then_narrow, conversion.narrow_checked,
      conversion.narrow_checked / conversion.check_then_narrow, conversion.widen_then_apply,
      conversion.widen_and_apply, conversion.widen_and_apply / conversion.widen_then_apply);
}

void PrintLatencyTable(const std::vector<PullPushResult>& results, int repeats) {
  std::printf("\nlatency in us (median of %d repeats), mean / p50 / p99:\n", repeats);
  std::printf("%-8s %-9s | %-23s | %-23s | %-23s | %s\n", "size", "path", "pull", "push", "round",
              "rounds/repeat");
  for (const PullPushResult& r : results) {
    const Repeat fw = MedianRepeat(r.framework), bare = MedianRepeat(r.bare);
    std::printf("%-8s %-9s | %s | %s | %s | %lld\n", SizeLabel(r.bytes).c_str(), "framework",
                LatencyColumns(fw.pull).c_str(), LatencyColumns(fw.push).c_str(),
                LatencyColumns(fw.round).c_str(), static_cast<long long>(fw.rounds));
    const Repeat shm = MedianRepeat(r.shm);
    std::printf("%-8s %-9s | %s | %s | %s | %lld\n", "", "shm", LatencyColumns(shm.pull).c_str(),
                LatencyColumns(shm.push).c_str(), LatencyColumns(shm.round).c_str(),
                static_cast<long long>(shm.rounds));
    std::printf("%-8s %-9s | %s | %s | %s | %lld\n", "", "bare zmq",
                LatencyColumns(bare.pull).c_str(), LatencyColumns(bare.push).c_str(),
                LatencyColumns(bare.round).c_str(), static_cast<long long>(bare.rounds));
  }
}

void PrintRepeatsTable(const std::vector<PullPushResult>& results) {
  std::printf("\nMB/s of each repeat (framework ; shm ; bare zmq):\n");
  for (const PullPushResult& r : results) {
    std::vector<double> fw, shm, bare;
    for (const Repeat& x : r.framework) fw.push_back(x.bytes_per_s);
    for (const Repeat& x : r.shm) shm.push_back(x.bytes_per_s);
    for (const Repeat& x : r.bare) bare.push_back(x.bytes_per_s);
    std::printf("%-8s %s ; %s ; %s\n", SizeLabel(r.bytes).c_str(), Join(fw, 1e-6, "%.0f").c_str(),
                Join(shm, 1e-6, "%.0f").c_str(), Join(bare, 1e-6, "%.0f").c_str());
  }
}

// What each thread of bench_transport is, by its name.
std::string ThreadLabel(const std::string& name) {
  const std::string ps_zmq = std::to_string(kPsZmqThreadPrefix) + "/ZMQbg/";
  const std::string client_zmq = std::to_string(kClientZmqThreadPrefix) + "/ZMQbg/";
  if (name == "bench_transport") return "worker: training thread";
  if (name.rfind(client_zmq, 0) == 0) return "worker: ZeroMQ " + name.substr(client_zmq.size());
  if (name == "rpc-io") return "ps: I/O thread (serves pulls, small pushes)";
  if (name == "rpc-handler") return "ps: handler threads";
  if (name.rfind(ps_zmq, 0) == 0) return "ps: ZeroMQ " + name.substr(ps_zmq.size());
  return name;
}

// The defaults' trainer: the training thread's wall time per step by phase,
// then every thread's CPU time per step.
void PrintStepBreakdown(const TrainingResult& result) {
  const StepPhases& p = result.shm_phases;
  if (p.steps() == 0) return;
  std::printf("\n== where a step goes: 1 ps + 1 worker, shared memory, --overlap=on ==\n");
  std::printf("%lld steps; ms per step\n", static_cast<long long>(p.steps()));
  std::printf("%-44s | %8s\n", "worker's training thread, wall time", "ms");
  std::printf("%-44s | %8.3f\n", "computing (forward, backward, the rest)", p.MeanComputing());
  std::printf("%-44s | %8.3f\n", "waiting for the last push's acknowledgement",
              p.Mean(StepPhases::kAcknowledgement));
  std::printf("%-44s | %8.3f\n", "sending the push's parts and pulls",
              p.Mean(StepPhases::kSending));
  std::printf("%-44s | %8.3f\n", "waiting for the pulled values", p.Mean(StepPhases::kPull));
  std::printf("%-44s | %8.3f\n", "the step", p.MeanStep());
  std::printf("%-44s | %8s\n", "CPU time by thread", "ms");
  double all = 0;
  for (const auto& [name, seconds] : result.shm_thread_cpu) {
    const double ms = seconds * 1e3 / static_cast<double>(p.steps());
    if (ms < 0.0005) continue;
    all += ms;
    std::printf("%-44s | %8.3f\n", ThreadLabel(name).c_str(), ms);
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("%-44s | %8.3f (the step's wall time times %u cores: %.3f)\n", "all threads", all,
              cores, cores * p.MeanStep());
}

}  // namespace

std::string SizeLabel(size_t bytes) {
  if (bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

double FrameworkOverBare(const PullPushResult& result) {
  return MedianRepeat(result.framework).bytes_per_s / MedianRepeat(result.bare).bytes_per_s;
}

void PrintPullPushTables(const std::vector<PullPushResult>& results,
                         const ConversionSpeed& conversion, int repeats) {
  PrintThroughputTable(results);
  PrintBFloat16Table(results, conversion);
  PrintLatencyTable(results, repeats);
  PrintRepeatsTable(results);
}

void PrintTrainingTable(const TrainingOptions& options, const TrainingResult& result) {
  const double cluster_eps = Median(result.cluster_eps);
  const double shm_eps = Median(result.cluster_shm_eps);
  const double whole_eps = Median(result.cluster_whole_eps);
  const double local_eps = Median(result.local_eps);
  std::printf("\n== training: %s, batch %d ==\n", options.model.c_str(), options.batch_size);
  std::printf("data: %s\n", result.source.c_str());
  std::printf("%lld steps per repeat, same batches in the same order for both\n",
              static_cast<long long>(result.steps_per_repeat));
  std::printf("%-22s | %10s | %s\n", "configuration", "examples/s", "repeats");
  std::printf("%-22s | %10.0f | %s\n", "1 ps + 1 worker (TCP)", cluster_eps,
              Join(result.cluster_eps, 1, "%.0f").c_str());
  std::printf("%-22s | %10.0f | %s\n", "... shm, overlap", shm_eps,
              Join(result.cluster_shm_eps, 1, "%.0f").c_str());
  std::printf("%-22s | %10.0f | %s\n", "... each push whole", whole_eps,
              Join(result.cluster_whole_eps, 1, "%.0f").c_str());
  std::printf("%-22s | %10.0f | %s\n", "one process (local)", local_eps,
              Join(result.local_eps, 1, "%.0f").c_str());
  const bool same = result.cluster_loss == result.local_loss &&
                    result.cluster_shm_loss == result.local_loss &&
                    result.cluster_whole_loss == result.local_loss;
  std::printf("last-step loss: cluster %.6f, shm %.6f, whole %.6f, local %.6f (%s)\n",
              result.cluster_loss, result.cluster_shm_loss, result.cluster_whole_loss,
              result.local_loss, same ? "identical" : "differ");
  std::printf(
      "cluster_vs_local_examples_ratio: %.2f (TCP, push acknowledged before the next step)\n",
      cluster_eps / local_eps);
  std::printf("cluster_shm_vs_local_examples_ratio: %.2f (shared memory, --overlap=on)\n",
              shm_eps / local_eps);
  std::printf(
      "streamed_vs_whole_push_examples_ratio: %.2f (gradients pushed as backprop makes "
      "them, against each step's push sent whole)\n",
      shm_eps / whole_eps);
  PrintStepBreakdown(result);
}

}  // namespace pst
