#include "ps/sparse/disk_embedding_table.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ps/sparse/dynamic_embedding_table.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Optimizer> MakeOpt(const std::string& name) {
  OptimizerConfig config;
  config.name = name;
  config.learning_rate = 0.1f;
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  CHECK(optimizer.ok()) << optimizer.status().ToString();
  return std::move(optimizer).value();
}

// A fresh folder for one test.
std::string TestDir(const std::string& name) {
  const std::string dir =
      testing::TempDir() + "/disk_table_" + name + "_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

EmbeddingTableConfig Config(int64_t capacity, int64_t dim, int64_t min_count) {
  EmbeddingTableConfig config;
  config.name = "emb/disk";
  config.dim = dim;
  config.capacity = capacity;
  config.min_count = min_count;
  config.seed = 11;
  config.l2 = 0.01f;
  return config;
}

std::unique_ptr<DiskEmbeddingTable> OpenDisk(EmbeddingTableConfig config, const std::string& dir,
                                             int64_t cache_rows, const Optimizer& optimizer) {
  config.storage_dir = dir;
  config.cache_rows = cache_rows;
  StatusOr<std::unique_ptr<DiskEmbeddingTable>> table = DiskEmbeddingTable::Open(config, optimizer);
  CHECK(table.ok()) << table.status().ToString();
  return std::move(table).value();
}

// Equal rows, slots, versions and applies, bit for bit.
void ExpectSameRows(const EmbeddingRows& a, const EmbeddingRows& b) {
  ASSERT_EQ(a.ids, b.ids);
  ASSERT_EQ(a.versions, b.versions);
  ASSERT_EQ(a.values.size(), b.values.size());
  ASSERT_EQ(a.slots.size(), b.slots.size());
  // memcmp of no bytes may still not be handed null (SGD has no slots).
  EXPECT_TRUE(a.values.empty() ||
              std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0);
  EXPECT_TRUE(a.slots.empty() ||
              std::memcmp(a.slots.data(), b.slots.data(), a.slots.size() * sizeof(float)) == 0);
  EXPECT_EQ(a.applies, b.applies);
}

// A cut's or a listing's rows by key.
std::map<int64_t, std::vector<float>> ByKey(const std::vector<int64_t>& ids,
                                            const std::vector<float>& values, int64_t dim) {
  std::map<int64_t, std::vector<float>> rows;
  for (size_t i = 0; i < ids.size(); ++i) {
    rows[ids[i]].assign(values.begin() + i * dim, values.begin() + (i + 1) * dim);
  }
  return rows;
}

// Every row of `table`, listed `at_a_time` rows a call.
std::map<int64_t, std::vector<float>> Listed(EmbeddingTable* table, int64_t at_a_time) {
  std::vector<int64_t> ids;
  std::vector<float> values;
  for (int64_t cursor = 0; cursor >= 0;) {
    StatusOr<int64_t> next = table->ListRows(cursor, at_a_time, &ids, &values);
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok()) break;
    cursor = *next;
  }
  EXPECT_EQ(ByKey(ids, values, table->dim()).size(), ids.size()) << "a key listed twice";
  return ByKey(ids, values, table->dim());
}

// Both tables' changes since their last cut: the same keys and rows.
void ExpectSameCut(EmbeddingTable* ram, EmbeddingTable* disk, int call) {
  StatusOr<DynamicCut> a = ram->CutChanged(true), b = disk->CutChanged(true);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(b->removed.empty());  // a table on disk evicts nothing
  EXPECT_EQ(ByKey(a->ids, a->values, ram->dim()), ByKey(b->ids, b->values, disk->dim()))
      << "cut at call " << call;
}

// Random pulls, peeks and applies to both tables; every row and version
// read must agree as the calls go, and so must every export cut (one every
// 300 calls), the listing and the tables at the end.
void RunSame(EmbeddingTable* ram, EmbeddingTable* disk, int64_t keys, int calls, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t dim = ram->dim();
  std::uniform_int_distribution<int64_t> key(-keys / 2, keys / 2);
  std::normal_distribution<float> grad(0.0f, 1.0f);
  ASSERT_TRUE(ram->CutChanged(false).ok() && disk->CutChanged(false).ok());
  for (int call = 0; call < calls; ++call) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 64);
    std::vector<int64_t> ids(n);
    for (int64_t& id : ids) id = key(rng);
    if (call % 300 == 299) ExpectSameCut(ram, disk, call);
    if (const uint64_t op = rng() % 3; op < 2) {
      std::vector<float> a(n * dim), b(n * dim);
      std::vector<int64_t> va(n), vb(n);
      if (op == 0) {
        ram->Pull(ids.data(), n, a.data(), va.data());
        disk->Pull(ids.data(), n, b.data(), vb.data());
      } else {
        ram->Peek(ids.data(), n, a.data(), va.data());
        disk->Peek(ids.data(), n, b.data(), vb.data());
      }
      ASSERT_EQ(va, vb) << "call " << call;
      ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "call " << call;
    } else {
      std::vector<float> g(n * dim), scales(n);
      for (float& x : g) x = grad(rng);
      for (float& s : scales) s = 1.0f / (1 + rng() % 3);
      ASSERT_EQ(ram->Apply(ids.data(), g.data(), n, scales.data()),
                disk->Apply(ids.data(), g.data(), n, scales.data()));
      std::vector<int64_t> va(n), vb(n);
      ram->Versions(ids.data(), n, va.data());
      disk->Versions(ids.data(), n, vb.data());
      ASSERT_EQ(va, vb) << "call " << call;
    }
  }
  ExpectSameCut(ram, disk, calls);
  EXPECT_EQ(Listed(ram, 1000000), Listed(disk, 7));
  ExpectSameRows(ram->Export(), disk->Export());
  const EmbeddingTableStats a = ram->Stats(), b = disk->Stats();
  EXPECT_EQ(a.rows_held, b.rows_held);
  EXPECT_EQ(a.rows_created, b.rows_created);
  EXPECT_EQ(a.keys_refused, b.keys_refused);
  EXPECT_EQ(a.rows_dropped, b.rows_dropped);
  EXPECT_EQ(a.rows_applied, b.rows_applied);
}

TEST(DiskEmbeddingTable, SameAsInRamTableWithACacheFarSmallerThanTheKeys) {
  for (const char* optimizer_name : {"adagrad", "adam", "sgd"}) {
    for (int64_t min_count : {1, 2}) {
      SCOPED_TRACE(std::string(optimizer_name) + " min_count " + std::to_string(min_count));
      auto optimizer = MakeOpt(optimizer_name);
      const EmbeddingTableConfig config = Config(/*capacity=*/4000, /*dim=*/5, min_count);
      DynamicEmbeddingTable ram(config, *optimizer);
      auto disk = OpenDisk(config, TestDir("same"), /*cache_rows=*/40, *optimizer);
      RunSame(&ram, disk.get(), /*keys=*/2000, /*calls=*/1500, /*seed=*/min_count);
      const DiskCacheStats cache = disk->cache_stats();
      EXPECT_EQ(cache.cached, 40);
      EXPECT_GT(cache.misses, cache.hits);  // the cache is 2% of the keys
      EXPECT_GT(cache.writebacks, 1000);
    }
  }
}

TEST(DiskEmbeddingTable, CapacityBoundsTheRowsOnDiskAndRefusesKeysBeyondIt) {
  auto optimizer = MakeOpt("sgd");
  auto disk = OpenDisk(Config(/*capacity=*/3, 2, 1), TestDir("capacity"), 2, *optimizer);
  const std::vector<int64_t> ids = {1, 2, 3, 4, 1};
  std::vector<float> rows(ids.size() * 2);
  std::vector<int64_t> versions(ids.size());
  disk->Pull(ids.data(), 5, rows.data(), versions.data());
  EXPECT_EQ(disk->Stats().rows_held, 3);
  EXPECT_EQ(disk->Stats().keys_refused, 1);  // key 4
  EXPECT_EQ(disk->Stats().rows_evicted, 0);
  EXPECT_EQ(rows[6], 0.0f);
  EXPECT_EQ(rows[7], 0.0f);
  EXPECT_NE(rows[8], 0.0f);  // key 1 again, read back from disk
}

TEST(DiskEmbeddingTable, ConcurrentPullsAndAppliesKeepEveryUpdate) {
  auto optimizer = MakeOpt("sgd");
  auto disk = OpenDisk(Config(1000, 4, 1), TestDir("threads"), 16, *optimizer);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> rows(8 * 4), grads(8 * 4, 0.5f);
      std::vector<int64_t> ids(8), versions(8);
      for (int i = 0; i < 200; ++i) {
        for (int j = 0; j < 8; ++j) ids[j] = (t * 7 + i * 3 + j) % 100;
        disk->Pull(ids.data(), 8, rows.data(), versions.data());
        disk->Apply(ids.data(), grads.data(), 8, nullptr);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const EmbeddingRows rows = disk->Export();
  int64_t total = 0;
  for (int64_t v : rows.versions) total += v;
  EXPECT_EQ(total, 4 * 200 * 8);
}

// Threads pull, apply and ask the versions of overlapping random keys of a
// table whose cache holds a few percent of them, so that rows are read
// from RocksDB while other threads load, change and evict them. Every
// apply must land on the row as the previous one left it: each key's row
// must be bit for bit what an in-RAM table gives after the same number of
// applies of the same gradient (Adagrad's update of a row depends on its
// own history only, so the order between keys does not matter).
TEST(DiskEmbeddingTable, ConcurrentCallsOnOverlappingKeysLoseNoUpdateAndReadNoStaleRow) {
  auto optimizer = MakeOpt("adagrad");
  const EmbeddingTableConfig config = Config(/*capacity=*/10000, /*dim=*/4, /*min_count=*/1);
  auto disk = OpenDisk(config, TestDir("overlap"), /*cache_rows=*/24, *optimizer);
  constexpr int kThreads = 4, kCalls = 300, kKeys = 400;
  std::vector<std::vector<int64_t>> applied(kThreads, std::vector<int64_t>(kKeys, 0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int call = 0; call < kCalls; ++call) {
        const int64_t n = 1 + static_cast<int64_t>(rng() % 16);
        std::vector<int64_t> ids(n), versions(n), after(n);
        for (int64_t& id : ids) id = static_cast<int64_t>(rng() % kKeys);
        std::vector<float> rows(n * 4), grads(n * 4, 0.5f);
        disk->Pull(ids.data(), n, rows.data(), versions.data());
        EXPECT_EQ(disk->Apply(ids.data(), grads.data(), n, nullptr), n);
        for (int64_t id : ids) ++applied[t][id];
        disk->Versions(ids.data(), n, after.data());
        for (int64_t i = 0; i < n; ++i) EXPECT_GT(after[i], versions[i]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  DynamicEmbeddingTable ram(config, *optimizer);
  const std::vector<float> grad(4, 0.5f);
  std::vector<float> row(4);
  int64_t version = 0, total = 0;
  for (int64_t key = 0; key < kKeys; ++key) {
    int64_t count = 0;
    for (int t = 0; t < kThreads; ++t) count += applied[t][key];
    if (count == 0) continue;
    ram.Pull(&key, 1, row.data(), &version);
    for (int64_t i = 0; i < count; ++i) ram.Apply(&key, grad.data(), 1, nullptr);
    total += count;
  }
  const EmbeddingRows a = ram.Export(), b = disk->Export();
  ASSERT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.versions, b.versions);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(b.applies, kThreads * kCalls);
  int64_t versions = 0;
  for (int64_t v : b.versions) versions += v;
  EXPECT_EQ(versions, total);
  EXPECT_EQ(disk->Stats().rows_applied, total);
  EXPECT_GT(disk->cache_stats().writebacks, 100);
}

// A table in a known state: keys [0, 300) pulled, every third applied.
void Fill(EmbeddingTable* table) {
  const int64_t dim = table->dim();
  for (int64_t base = 0; base < 300; base += 30) {
    std::vector<int64_t> ids(30);
    for (int i = 0; i < 30; ++i) ids[i] = base + i;
    std::vector<float> rows(30 * dim), grads(30 * dim, 0.25f);
    std::vector<int64_t> versions(30);
    table->Pull(ids.data(), 30, rows.data(), versions.data());
    std::vector<int64_t> thirds;
    for (int64_t id : ids) {
      if (id % 3 == 0) thirds.push_back(id);
    }
    table->Apply(thirds.data(), grads.data(), static_cast<int64_t>(thirds.size()), nullptr);
  }
}

TEST(DiskEmbeddingTable, CheckpointHardLinksTheFilesAndRestoresEveryRow) {
  auto optimizer = MakeOpt("adagrad");
  const std::string dir = TestDir("checkpoint");
  const EmbeddingTableConfig config = Config(1000, 3, 1);
  auto disk = OpenDisk(config, dir + "/live", 10, *optimizer);
  Fill(disk.get());
  const EmbeddingRows before = disk->Export();
  const std::string folder = dir + "/ckpt-5/ps-0.emb_disk.rocksdb";
  StatusOr<DiskCheckpointState> state = disk->Checkpoint(folder);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->rows_held, 300);
  EXPECT_EQ(state->applies, before.applies);
  int ssts = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".sst") continue;
    ++ssts;
    struct stat st;
    ASSERT_EQ(stat(entry.path().c_str(), &st), 0);
    EXPECT_GT(st.st_nlink, 1u) << entry.path() << " is a copy, not a hard link";
  }
  EXPECT_GT(ssts, 0);

  // Training goes on after the checkpoint; the restore goes back to it.
  Fill(disk.get());
  ASSERT_TRUE(disk->RestoreCheckpoint(folder, *state).ok());
  ExpectSameRows(disk->Export(), before);
  EXPECT_EQ(disk->Stats().rows_held, 300);

  // A new process: a fresh table (emptied live folder) restored.
  disk.reset();
  auto fresh = OpenDisk(config, dir + "/live", 10, *optimizer);
  EXPECT_EQ(fresh->Stats().rows_held, 0);
  const Status restored = fresh->RestoreCheckpoint(folder, *state);
  ASSERT_TRUE(restored.ok()) << restored.ToString();
  ExpectSameRows(fresh->Export(), before);
  // The restored live folder shares the checkpoint's SST files.
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".sst") continue;
    struct stat a, b;
    ASSERT_EQ(stat(entry.path().c_str(), &a), 0);
    const fs::path live = fs::path(fresh->live_folder()) / entry.path().filename();
    if (stat(live.c_str(), &b) == 0) EXPECT_EQ(a.st_ino, b.st_ino);
  }
}

TEST(DiskEmbeddingTable, CorruptOrMissingCheckpointIsDataLossAndLeavesTheTableEmpty) {
  auto optimizer = MakeOpt("adagrad");
  const std::string dir = TestDir("corrupt");
  const EmbeddingTableConfig config = Config(1000, 3, 1);
  auto disk = OpenDisk(config, dir + "/live", 10, *optimizer);
  Fill(disk.get());
  const std::string folder = dir + "/ckpt/t.rocksdb";
  StatusOr<DiskCheckpointState> state = disk->Checkpoint(folder);
  ASSERT_TRUE(state.ok());
  disk.reset();  // the live folder's links go; the checkpoint's files stay

  auto fresh = OpenDisk(config, dir + "/live", 10, *optimizer);
  Status missing = fresh->RestoreCheckpoint(dir + "/nowhere", *state);
  EXPECT_EQ(missing.code(), Code::kDataLoss) << missing.ToString();
  EXPECT_NE(missing.message().find("emb/disk"), std::string::npos) << missing.ToString();

  DiskCheckpointState wrong = *state;
  wrong.rows_held = 7;
  EXPECT_EQ(fresh->RestoreCheckpoint(folder, wrong).code(), Code::kDataLoss);

  // Another table's row size (another dim) is refused too.
  {
    EmbeddingTableConfig other = config;
    other.dim = 4;
    auto other_table = OpenDisk(other, dir + "/other", 10, *optimizer);
    EXPECT_EQ(other_table->RestoreCheckpoint(folder, *state).code(), Code::kDataLoss);
  }

  // Flip bytes in the middle of every SST file.
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".sst") continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(entry.path()) / 3));
    const std::string junk(64, '\x5a');
    f.write(junk.data(), junk.size());
  }
  Status corrupt = fresh->RestoreCheckpoint(folder, *state);
  EXPECT_EQ(corrupt.code(), Code::kDataLoss) << corrupt.ToString();
  EXPECT_EQ(fresh->Stats().rows_held, 0);
  std::vector<int64_t> ids = {3};
  std::vector<float> rows(3);
  std::vector<int64_t> versions(1);
  fresh->Pull(ids.data(), 1, rows.data(), versions.data());  // usable, empty
  EXPECT_EQ(versions[0], 0);
}

TEST(DiskEmbeddingTable, UnwritableFolderIsUnavailableNamingIt) {
  auto optimizer = MakeOpt("sgd");
  const std::string dir = TestDir("unwritable");
  const std::string file = dir + "/a_file";
  std::ofstream(file) << "not a folder";
  EmbeddingTableConfig config = Config(10, 2, 1);
  config.storage_dir = file;
  config.cache_rows = 4;
  StatusOr<std::unique_ptr<EmbeddingTable>> table = EmbeddingTable::Create(config, *optimizer);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), Code::kUnavailable);
  EXPECT_NE(table.status().message().find(file), std::string::npos) << table.status().ToString();
}

TEST(DiskEmbeddingTable, CreateRefusesFixedTablesAndNoCache) {
  auto optimizer = MakeOpt("sgd");
  EmbeddingTableConfig fixed = Config(0, 2, 1);
  fixed.rows = 100;
  fixed.storage_dir = TestDir("fixed");
  fixed.cache_rows = 10;
  StatusOr<std::unique_ptr<EmbeddingTable>> a = EmbeddingTable::Create(fixed, *optimizer);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("fixed table"), std::string::npos) << a.status().ToString();
  EmbeddingTableConfig no_cache = Config(10, 2, 1);
  no_cache.storage_dir = fixed.storage_dir;
  EXPECT_EQ(EmbeddingTable::Create(no_cache, *optimizer).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst
