// bench_disk_table: a dynamic table on disk (DiskEmbeddingTable, RocksDB
// with a RAM cache of --cache_rows rows) against the in-RAM
// DynamicEmbeddingTable, measured in the same run, one thread, Adagrad.
//
// Each table first gets --keys distinct keys (splitmix64 of 0, 1, ...),
// pulled and applied in batches of --batch (its capacity is --keys, so
// the RAM table evicts nothing). Then, for each hit rate h of --hit_rates,
// --batches batches of --batch keys: each key is, with probability h, one
// of the hot keys (the first cache_rows / 2), else any of the --keys; every
// batch is pulled, then applied with random gradients. Printed per h:
// keys (pull + apply) per second of each table, their ratio, and the disk
// table's measured cache hit rate (hits / keys looked up); then the same
// per second of the process's CPU time (every thread's, RocksDB's
// background flushes and compactions included), the figure to compare on
// a machine that other jobs share, where wall-clock rates follow their
// load more than the tables (a compaction a phase's writes start may run
// into the next phase). Then each
// table's resident size: VmRSS above the process before the table existed
// (the disk table first, freed before the RAM one is made).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_main.h"
#include "common/clock.h"
#include "ps/optimizers/optimizer.h"
#include "ps/sparse/disk_embedding_table.h"
#include "ps/sparse/dynamic_embedding_table.h"

DEFINE_int64(keys, 2000000, "Distinct keys in each table");
DEFINE_int64(cache_rows, 100000, "Rows of the disk table's RAM cache");
DEFINE_int64(dim, 16, "Floats per row");
DEFINE_int64(batch, 1024, "Keys per pull and apply");
DEFINE_int64(batches, 500, "Batches per hit rate");
DEFINE_string(hit_rates, "1,0.99,0.9,0.5,0", "Probabilities of a hot key, comma-separated");
DEFINE_string(dir, "/tmp/bench_disk_table", "Folder of the disk table (emptied)");

namespace pst {
namespace {

int64_t RssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  LOG(FATAL) << "no VmRSS in /proc/self/status";
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Seconds of CPU time of every thread of the process so far.
double ProcessCpuSeconds() {
  timespec t;
  CHECK_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t), 0);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

struct Result {
  std::vector<double> keys_per_second;      // per hit rate
  std::vector<double> keys_per_cpu_second;  // per hit rate
  std::vector<double> hit_rates;            // measured (disk table only)
  int64_t rss = 0;                          // above the process before the table
};

Result Run(bool disk, const Optimizer& optimizer, const std::vector<double>& hot) {
  EmbeddingTableConfig config;
  config.name = "bench/embedding";
  config.dim = FLAGS_dim;
  config.capacity = FLAGS_keys;
  config.seed = 1;
  if (disk) {
    std::filesystem::remove_all(FLAGS_dir);
    config.storage_dir = FLAGS_dir;
    config.cache_rows = FLAGS_cache_rows;
  }
  const int64_t before = RssBytes();
  StatusOr<std::unique_ptr<EmbeddingTable>> made = EmbeddingTable::Create(config, optimizer);
  CHECK(made.ok()) << made.status().ToString();
  EmbeddingTable& table = **made;
  const int64_t n = FLAGS_batch, dim = FLAGS_dim;
  std::vector<int64_t> ids(n), versions(n);
  std::vector<float> rows(n * dim), grads(n * dim, 0.001f);
  for (int64_t at = 0; at < FLAGS_keys; at += n) {
    const int64_t m = std::min(n, FLAGS_keys - at);
    for (int64_t i = 0; i < m; ++i) ids[i] = static_cast<int64_t>(SplitMix64(at + i));
    table.Pull(ids.data(), m, rows.data(), versions.data());
    table.Apply(ids.data(), grads.data(), m, nullptr);
  }
  Result result;
  uint64_t rng = 99;
  const int64_t hot_keys = std::max<int64_t>(1, FLAGS_cache_rows / 2);
  for (double h : hot) {
    const DiskCacheStats start =
        disk ? static_cast<DiskEmbeddingTable&>(table).cache_stats() : DiskCacheStats();
    const auto t0 = SteadyClock().Now();
    const double cpu0 = ProcessCpuSeconds();
    for (int64_t b = 0; b < FLAGS_batches; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        rng = SplitMix64(rng);
        const bool is_hot = static_cast<double>(rng >> 11) * 0x1.0p-53 < h;
        rng = SplitMix64(rng);
        ids[i] = static_cast<int64_t>(
            SplitMix64(is_hot ? rng % hot_keys : rng % static_cast<uint64_t>(FLAGS_keys)));
      }
      table.Pull(ids.data(), n, rows.data(), versions.data());
      table.Apply(ids.data(), grads.data(), n, nullptr);
    }
    const double seconds = std::chrono::duration<double>(SteadyClock().Now() - t0).count();
    result.keys_per_second.push_back(FLAGS_batches * n / seconds);
    result.keys_per_cpu_second.push_back(FLAGS_batches * n / (ProcessCpuSeconds() - cpu0));
    if (disk) {
      const DiskCacheStats end = static_cast<DiskEmbeddingTable&>(table).cache_stats();
      const double hits = end.hits - start.hits, misses = end.misses - start.misses;
      result.hit_rates.push_back(hits / (hits + misses));
    }
  }
  result.rss = RssBytes() - before;
  return result;
}

int Main() {
  OptimizerConfig opt_config;
  opt_config.name = "adagrad";
  opt_config.learning_rate = 0.05f;
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(opt_config);
  CHECK(optimizer.ok()) << optimizer.status().ToString();
  std::vector<double> hot;
  std::stringstream list(FLAGS_hit_rates);
  for (std::string item; std::getline(list, item, ',');) hot.push_back(std::stod(item));

  const Result disk = Run(true, **optimizer, hot);
  const Result ram = Run(false, **optimizer, hot);
  std::filesystem::remove_all(FLAGS_dir);
  std::printf("keys %lld, cache_rows %lld, dim %lld, batch %lld, adagrad, %lld batches a row\n\n",
              static_cast<long long>(FLAGS_keys), static_cast<long long>(FLAGS_cache_rows),
              static_cast<long long>(FLAGS_dim), static_cast<long long>(FLAGS_batch),
              static_cast<long long>(FLAGS_batches));
  std::printf("%9s %11s %12s %12s %8s %12s %12s %8s\n", "hot keys", "cache hits", "ram keys/s",
              "disk keys/s", "disk/ram", "ram k/cpu-s", "disk k/cpu-s", "disk/ram");
  for (size_t i = 0; i < hot.size(); ++i) {
    std::printf("%9.2f %11.3f %12.0f %12.0f %8.3f %12.0f %12.0f %8.3f\n", hot[i], disk.hit_rates[i],
                ram.keys_per_second[i], disk.keys_per_second[i],
                disk.keys_per_second[i] / ram.keys_per_second[i], ram.keys_per_cpu_second[i],
                disk.keys_per_cpu_second[i],
                disk.keys_per_cpu_second[i] / ram.keys_per_cpu_second[i]);
  }
  std::printf("\nRSS above the process before the table: ram %.1f MB, disk %.1f MB (%.3f)\n",
              ram.rss / 1e6, disk.rss / 1e6, static_cast<double>(disk.rss) / ram.rss);
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_disk_table [--keys=K] [--cache_rows=C] [--dim=D] [--batch=B] "
                           "[--batches=N] [--hit_rates=H,...] [--dir=DIR]: a dynamic table on "
                           "disk against the in-RAM one, keys/s at controlled hit rates and RSS",
                           "bench/bench_disk_table.cc")) {
    return 0;
  }
  return pst::Main();
}
