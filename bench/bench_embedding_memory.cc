// bench_embedding_memory: a dynamic embedding table's resident memory and
// time per key under a stream of distinct keys far larger than its capacity.
//
// Measures, in one thread, on one DynamicEmbeddingTable (ps/sparse/) of
// --capacity rows of --dim floats on shard 0 of 1, with Adagrad (one slot:
// 2 x dim floats a row):
//  - a stream of --keys distinct keys (splitmix64 of 0, 1, 2, ...: a
//    bijection, so never a repeat), in batches of --batch: each batch is
//    pulled (--min_count times when admission needs more than one pull, so
//    every key gets its row), then applied with random gradients (uniform in
//    [-0.01, 0.01)); once capacity rows exist every new key evicts one;
//  - the process's resident size (VmRSS of /proc/self/status) before the
//    table exists ("empty"), right after it is created, and after every
//    --report_every keys; reported as MB (1e6 bytes) above empty, against
//    the bound 1.5 x capacity x row bytes (values and slots), with the
//    ratio; VmHWM (the peak) at the end;
//  - the time of the pulls and applies, gradient generation included, as
//    nanoseconds per key: wall (std::chrono::steady_clock) and this
//    process's CPU time (CLOCK_PROCESS_CPUTIME_ID; one thread, so the
//    table's own CPU time even when other processes share the cores).
// The last line of the output is "max_rss_ratio: X" (the largest ratio seen;
// <= 1 is within the bound).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_main.h"
#include "common/clock.h"
#include "ps/optimizers/optimizer.h"
#include "ps/sparse/dynamic_embedding_table.h"
#include "ps/sparse/embedding_table.h"

DEFINE_int64(keys, 50000000, "Distinct keys to stream through the table");
DEFINE_int64(capacity, 1000000, "The table's capacity (rows)");
DEFINE_int64(dim, 16, "Floats per row");
DEFINE_int64(batch, 4096, "Keys per pull and apply");
DEFINE_int64(min_count, 1, "Pulls before a key gets a row (each batch is pulled this many times)");
DEFINE_int64(report_every, 5000000, "Keys between two rows of the table");

namespace pst {
namespace {

// A line of /proc/self/status ("VmRSS:", "VmHWM:") in bytes.
int64_t StatusBytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t len = std::string(field).size();
  while (std::getline(in, line)) {
    if (line.compare(0, len, field) == 0) return std::atoll(line.c_str() + len) * 1024;
  }
  LOG(FATAL) << "no " << field << " in /proc/self/status";
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

double Mb(int64_t bytes) { return bytes / 1e6; }

// This process's CPU time in seconds.
double CpuSeconds() {
  timespec ts;
  PCHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int Main() {
  CHECK_GT(FLAGS_keys, 0);
  CHECK_GT(FLAGS_batch, 0);
  CHECK_GT(FLAGS_report_every, 0);
  OptimizerConfig opt_config;
  opt_config.name = "adagrad";
  opt_config.learning_rate = 0.05f;
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(opt_config);
  CHECK(optimizer.ok()) << optimizer.status().ToString();

  EmbeddingTableConfig config;
  config.name = "bench/embedding";
  config.dim = FLAGS_dim;
  config.capacity = FLAGS_capacity;
  config.min_count = FLAGS_min_count;
  config.seed = 1;

  // Buffers first, so that "empty" holds everything but the table.
  const int64_t batch = FLAGS_batch;
  std::vector<int64_t> ids(batch), versions(batch);
  std::vector<float> rows(batch * FLAGS_dim), grads(batch * FLAGS_dim);
  std::fill(rows.begin(), rows.end(), 0.0f);
  std::fill(grads.begin(), grads.end(), 0.0f);

  const int64_t empty = StatusBytes("VmRSS:");
  StatusOr<std::unique_ptr<EmbeddingTable>> made = EmbeddingTable::Create(config, **optimizer);
  CHECK(made.ok()) << made.status().ToString();
  EmbeddingTable& table = **made;
  const int64_t created = StatusBytes("VmRSS:");

  const int64_t row_bytes = (1 + (*optimizer)->RowSlots()) * FLAGS_dim * sizeof(float);
  const int64_t bound = FLAGS_capacity * row_bytes * 3 / 2;
  const uint64_t overhead = static_cast<DynamicEmbeddingTable&>(table).overhead_bytes();
  std::printf("dynamic table: capacity %lld rows, dim %lld, adagrad, min_count %lld\n",
              static_cast<long long>(FLAGS_capacity), static_cast<long long>(FLAGS_dim),
              static_cast<long long>(FLAGS_min_count));
  std::printf("row bytes (value + slots) %lld; bound 1.5 x capacity x row bytes = %.1f MB\n",
              static_cast<long long>(row_bytes), Mb(bound));
  std::printf(
      "per-slot arrays (not written until used): values+slots %.1f MB, keys+versions+links %.1f "
      "MB; written at creation: index+sketch %.1f MB\n",
      Mb(FLAGS_capacity * row_bytes), Mb(FLAGS_capacity * 24), Mb(overhead));
  std::printf("VmRSS empty %.1f MB; after creating the table +%.1f MB\n\n", Mb(empty),
              Mb(created - empty));
  std::printf("%14s %10s %10s %15s %11s %7s %12s %12s\n", "keys streamed", "rows held", "evicted",
              "RSS above (MB)", "bound (MB)", "ratio", "wall ns/key", "cpu ns/key");

  uint64_t rng = 12345;
  auto uniform = [&rng]() {  // [-0.01, 0.01)
    rng = SplitMix64(rng);
    return (static_cast<float>(rng >> 40) * (1.0f / 8388608.0f) - 1.0f) * 0.01f;
  };
  double max_ratio = 0, total_seconds = 0, total_cpu = 0, interval_cpu = 0;
  int64_t streamed = 0, next_report = std::min(FLAGS_report_every, FLAGS_keys);
  MonotonicClock::Duration interval{};
  int64_t interval_keys = 0;
  while (streamed < FLAGS_keys) {
    const int64_t n = std::min(batch, FLAGS_keys - streamed);
    for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int64_t>(SplitMix64(streamed + i));
    const MonotonicClock::TimePoint start = SteadyClock().Now();
    const double cpu_start = CpuSeconds();
    for (int64_t pull = 0; pull < FLAGS_min_count; ++pull) {
      table.Pull(ids.data(), n, rows.data(), versions.data());
    }
    for (int64_t i = 0; i < n * FLAGS_dim; ++i) grads[i] = uniform();
    table.Apply(ids.data(), grads.data(), n, nullptr);
    interval += SteadyClock().Now() - start;
    interval_cpu += CpuSeconds() - cpu_start;
    interval_keys += n;
    streamed += n;
    if (streamed >= next_report) {
      const EmbeddingTableStats stats = table.Stats();
      const int64_t above = StatusBytes("VmRSS:") - empty;
      const double ratio = static_cast<double>(above) / bound;
      max_ratio = std::max(max_ratio, ratio);
      const double seconds = std::chrono::duration<double>(interval).count();
      total_seconds += seconds;
      total_cpu += interval_cpu;
      std::printf("%14lld %10lld %10lld %15.1f %11.1f %7.3f %12.1f %12.1f\n",
                  static_cast<long long>(streamed), static_cast<long long>(stats.rows_held),
                  static_cast<long long>(stats.rows_evicted), Mb(above), Mb(bound), ratio,
                  1e9 * seconds / interval_keys, 1e9 * interval_cpu / interval_keys);
      std::fflush(stdout);
      CHECK_LE(stats.rows_held, FLAGS_capacity);
      interval = MonotonicClock::Duration{};
      interval_keys = 0;
      interval_cpu = 0;
      next_report = std::min(next_report + FLAGS_report_every, FLAGS_keys);
    }
  }
  const EmbeddingTableStats stats = table.Stats();
  std::printf(
      "\n%lld keys in %.1f s wall, %.1f s cpu: %.1f / %.1f ns per key (pull%s + apply); rows "
      "created %lld, evicted %lld, refused %lld, applied %lld, dropped %lld\n",
      static_cast<long long>(streamed), total_seconds, total_cpu, 1e9 * total_seconds / streamed,
      1e9 * total_cpu / streamed, FLAGS_min_count > 1 ? " x min_count" : "",
      static_cast<long long>(stats.rows_created), static_cast<long long>(stats.rows_evicted),
      static_cast<long long>(stats.keys_refused), static_cast<long long>(stats.rows_applied),
      static_cast<long long>(stats.rows_dropped));
  std::printf("VmHWM (peak) above empty: %.1f MB (%.3f of the bound)\n",
              Mb(StatusBytes("VmHWM:") - empty),
              static_cast<double>(StatusBytes("VmHWM:") - empty) / bound);
  std::printf("max_rss_ratio: %.3f\n", max_ratio);
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_embedding_memory [--keys=K] [--capacity=C] [--dim=D] "
                           "[--batch=B] [--min_count=M] [--report_every=R]: a dynamic embedding "
                           "table's resident memory and ns per key under a stream of distinct keys",
                           "bench/bench_embedding_memory.cc")) {
    return 0;
  }
  return pst::Main();
}
