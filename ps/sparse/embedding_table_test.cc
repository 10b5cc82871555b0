#include "ps/sparse/embedding_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <list>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ps/sparse/dynamic_embedding_table.h"
#include "ps/sparse/fixed_embedding_table.h"

namespace pst {
namespace {

std::unique_ptr<Optimizer> MakeOpt(const std::string& name, float learning_rate = 0.1f) {
  OptimizerConfig config;
  config.name = name;
  config.learning_rate = learning_rate;
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  CHECK(optimizer.ok()) << optimizer.status().ToString();
  return std::move(optimizer).value();
}

EmbeddingTableConfig Fixed(int64_t rows, int64_t dim, int shard = 0, int num_shards = 1) {
  EmbeddingTableConfig config;
  config.name = "emb/fixed";
  config.dim = dim;
  config.rows = rows;
  config.seed = 42;
  config.shard = shard;
  config.num_shards = num_shards;
  return config;
}

EmbeddingTableConfig Dynamic(int64_t capacity, int64_t dim, int64_t min_count = 1) {
  EmbeddingTableConfig config;
  config.name = "emb/dynamic";
  config.dim = dim;
  config.capacity = capacity;
  config.min_count = min_count;
  config.seed = 7;
  return config;
}

std::unique_ptr<EmbeddingTable> Make(const EmbeddingTableConfig& config,
                                     const Optimizer& optimizer) {
  StatusOr<std::unique_ptr<EmbeddingTable>> table = EmbeddingTable::Create(config, optimizer);
  CHECK(table.ok()) << table.status().ToString();
  return std::move(table).value();
}

DynamicEmbeddingTable& AsDynamic(EmbeddingTable& table) {
  CHECK(table.dynamic());
  return static_cast<DynamicEmbeddingTable&>(table);
}

std::vector<float> Initial(const EmbeddingTableConfig& config, int64_t key) {
  std::vector<float> row(config.dim);
  InitialRow(config.seed, config.name, key, config.init_scale, config.dim, row.data());
  return row;
}

// Pulls ids; returns their rows (n x dim), versions into *versions if given.
std::vector<float> PullRows(EmbeddingTable& table, const std::vector<int64_t>& ids,
                            std::vector<int64_t>* versions = nullptr) {
  std::vector<float> rows(ids.size() * table.dim(), -99.0f);
  std::vector<int64_t> v(ids.size(), -99);
  table.Pull(ids.data(), static_cast<int64_t>(ids.size()), rows.data(), v.data());
  if (versions != nullptr) *versions = v;
  return rows;
}

std::vector<float> Row(const std::vector<float>& rows, int64_t i, int64_t dim) {
  return std::vector<float>(rows.begin() + i * dim, rows.begin() + (i + 1) * dim);
}

int64_t Version(const EmbeddingTable& table, int64_t id) {
  int64_t version = -1;
  table.Versions(&id, 1, &version);
  return version;
}

int64_t ApplyRows(EmbeddingTable& table, const std::vector<int64_t>& ids,
                  const std::vector<float>& grads) {
  return table.Apply(ids.data(), grads.data(), static_cast<int64_t>(ids.size()), nullptr);
}

// A gradient row, different for each (key, salt).
std::vector<float> Grad(int64_t dim, int64_t key, int salt = 0) {
  std::vector<float> g(dim);
  for (int64_t j = 0; j < dim; ++j) g[j] = 0.1f * std::sin(0.9f * (j + 1) + 0.37f * key + salt);
  return g;
}

void ExpectSameRows(const EmbeddingRows& a, const EmbeddingRows& b) {
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.versions, b.versions);
  EXPECT_EQ(a.applies, b.applies);
}

// Under AddressSanitizer resident size says little: allocations are padded
// and poisoned, freed memory waits in quarantine. The resident-memory
// checks below run in the Release stage only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif
#else
constexpr bool kUnderAsan = false;
#endif

// This process's resident size (VmRSS) in bytes.
int64_t ResidentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 6, "VmRSS:") == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return -1;
}

// ---------------------------------------------------------------- InitialRow

TEST(InitialRowTest, DeterministicBoundedAndKeyed) {
  std::vector<float> a(16), b(16), other_key(16), other_seed(16), other_name(16);
  InitialRow(1, "t", 5, 0.05f, 16, a.data());
  InitialRow(1, "t", 5, 0.05f, 16, b.data());
  InitialRow(1, "t", 6, 0.05f, 16, other_key.data());
  InitialRow(2, "t", 5, 0.05f, 16, other_seed.data());
  InitialRow(1, "u", 5, 0.05f, 16, other_name.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other_key);
  EXPECT_NE(a, other_seed);
  EXPECT_NE(a, other_name);
  for (float x : a) {
    EXPECT_GE(x, -0.05f);
    EXPECT_LT(x, 0.05f);
  }
  // A prefix of a wider row: column c depends on (seed, name, key, c) only.
  std::vector<float> wide(32);
  InitialRow(1, "t", 5, 0.05f, 32, wide.data());
  EXPECT_EQ(std::vector<float>(wide.begin(), wide.begin() + 16), a);
}

TEST(InitialRowTest, RoughlyUniform) {
  // 100k values in [-1, 1): mean near 0, variance near 1/3.
  constexpr int kKeys = 10000, kDim = 10;
  double sum = 0, sum_sq = 0;
  std::vector<float> row(kDim);
  for (int key = 0; key < kKeys; ++key) {
    InitialRow(3, "uniform", key, 1.0f, kDim, row.data());
    for (float x : row) {
      sum += x;
      sum_sq += x * x;
    }
  }
  const double n = kKeys * kDim;
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0 / 3, 0.01);
}

// ---------------------------------------------------------------- Create

TEST(CreateTest, RejectsBadConfigsNamingTheTable) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  struct Case {
    EmbeddingTableConfig config;
    std::string field;
  };
  std::vector<Case> cases;
  auto add = [&](EmbeddingTableConfig c, const std::string& field) { cases.push_back({c, field}); };
  EmbeddingTableConfig c = Fixed(10, 4);
  c.dim = 0;
  add(c, "dim");
  c = Fixed(10, 4);
  c.num_shards = 0;
  add(c, "num_shards");
  c = Fixed(10, 4, /*shard=*/2, /*num_shards=*/2);
  add(c, "shard");
  c = Fixed(10, 4);
  c.rows = -1;
  add(c, "rows");
  c = Fixed(10, 4);
  c.init_scale = -0.1f;
  add(c, "init_scale");
  c = Dynamic(0, 4);
  add(c, "capacity");
  c = Dynamic(10, 4, /*min_count=*/0);
  add(c, "min_count");
  c = Dynamic(10, 4, /*min_count=*/70000);
  add(c, "min_count");
  for (const Case& k : cases) {
    SCOPED_TRACE(k.field);
    StatusOr<std::unique_ptr<EmbeddingTable>> table = EmbeddingTable::Create(k.config, *sgd);
    ASSERT_FALSE(table.ok());
    EXPECT_EQ(table.status().code(), Code::kInvalidArgument);
    EXPECT_NE(table.status().message().find("table '" + k.config.name + "'"), std::string::npos)
        << table.status().message();
    EXPECT_NE(table.status().message().find(k.field), std::string::npos)
        << table.status().message();
  }
  c = Fixed(10, 4);
  c.name = "";
  EXPECT_FALSE(EmbeddingTable::Create(c, *sgd).ok());
}

TEST(CreateTest, KindFollowsRows) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  std::unique_ptr<EmbeddingTable> fixed = Make(Fixed(10, 4), *sgd);
  std::unique_ptr<EmbeddingTable> dynamic = Make(Dynamic(10, 4), *sgd);
  EXPECT_FALSE(fixed->dynamic());
  EXPECT_TRUE(dynamic->dynamic());
  EXPECT_NE(dynamic_cast<FixedEmbeddingTable*>(fixed.get()), nullptr);
  EXPECT_NE(dynamic_cast<DynamicEmbeddingTable*>(dynamic.get()), nullptr);
}

// ---------------------------------------------------------------- fixed

TEST(FixedTableTest, PullsInitialRowsDeterministically) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  const EmbeddingTableConfig config = Fixed(10, 4, /*shard=*/1, /*num_shards=*/2);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adagrad);
  std::unique_ptr<EmbeddingTable> twin = Make(config, *adagrad);
  const std::vector<int64_t> ids = {1, 9, 3, 1};
  std::vector<int64_t> versions;
  const std::vector<float> rows = PullRows(*table, ids, &versions);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(Row(rows, i, 4), Initial(config, ids[i])) << "id " << ids[i];
    EXPECT_EQ(versions[i], 0);
  }
  EXPECT_EQ(PullRows(*table, ids), rows);  // again
  EXPECT_EQ(PullRows(*twin, ids), rows);   // another replica
  EXPECT_NE(Row(rows, 0, 4), Row(rows, 1, 4));
  EmbeddingTableStats stats = table->Stats();
  EXPECT_EQ(stats.rows_held, 5);  // ids 1, 3, 5, 7, 9
  EXPECT_EQ(stats.bytes, 5u * 2 * 4 * sizeof(float));
  EXPECT_EQ(static_cast<FixedEmbeddingTable&>(*table).local_rows(), 5);
}

TEST(FixedTableTest, LocalRowCounts) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  // 10 ids over 3 shards: 0,3,6,9 | 1,4,7 | 2,5,8.
  const int64_t expected[] = {4, 3, 3};
  for (int shard = 0; shard < 3; ++shard) {
    std::unique_ptr<EmbeddingTable> table = Make(Fixed(10, 2, shard, 3), *sgd);
    EXPECT_EQ(table->Stats().rows_held, expected[shard]);
    EXPECT_TRUE(table->Export().ids.empty()) << "no row written yet";
  }
  // More shards than rows: shard 4 of 5 holds none of 3 rows.
  std::unique_ptr<EmbeddingTable> empty = Make(Fixed(3, 2, 4, 5), *sgd);
  EXPECT_EQ(empty->Stats().rows_held, 0);
  EXPECT_TRUE(empty->Export().ids.empty());
}

TEST(FixedTableTest, CheckIdsNamesTableAndId) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  std::unique_ptr<EmbeddingTable> table = Make(Fixed(10, 4, /*shard=*/1, /*num_shards=*/2), *sgd);
  const std::vector<int64_t> good = {1, 3, 9};
  EXPECT_TRUE(table->CheckIds(good.data(), 3).ok());
  EXPECT_TRUE(table->CheckIds(nullptr, 0).ok());

  const std::vector<int64_t> too_big = {1, 11};
  Status status = table->CheckIds(too_big.data(), 2);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "table 'emb/fixed': id 11 is out of range [0, 10)");

  const std::vector<int64_t> negative = {-1};
  status = table->CheckIds(negative.data(), 1);
  EXPECT_EQ(status.message(), "table 'emb/fixed': id -1 is out of range [0, 10)");

  const std::vector<int64_t> other_shard = {3, 4};
  status = table->CheckIds(other_shard.data(), 2);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "table 'emb/fixed': id 4 belongs to shard 0, not this shard 1");
}

TEST(FixedTableTest, ApplyMovesOnlyTouchedRowsAndSlots) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  const EmbeddingTableConfig config = Fixed(8, 3);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adagrad);
  EXPECT_TRUE(table->Export().ids.empty());
  const std::vector<int64_t> ids = {6, 2};
  std::vector<float> grads = Grad(3, 6);
  const std::vector<float> g2 = Grad(3, 2);
  grads.insert(grads.end(), g2.begin(), g2.end());
  EXPECT_EQ(ApplyRows(*table, ids, grads), 2);
  // Export holds the rows written, ascending, with their slots.
  const EmbeddingRows after = table->Export();
  ASSERT_EQ(after.ids, (std::vector<int64_t>{2, 6}));
  for (int64_t id = 0; id < 8; ++id) {
    SCOPED_TRACE("id " + std::to_string(id));
    const bool touched = id == 6 || id == 2;
    std::vector<float> value = Initial(config, id);
    std::vector<float> slots(3, 0.1f);  // adagrad's initial accumulator
    if (touched) {
      adagrad->ApplyRow(value.data(), slots.data(), Grad(3, id).data(), 3, 1.0f, 0);
      const int64_t at = id == 2 ? 0 : 1;
      EXPECT_EQ(Row(after.values, at, 3), value);
      EXPECT_EQ(Row(after.slots, at, 3), slots);
      EXPECT_EQ(after.versions[at], 1);
    }
    EXPECT_EQ(PullRows(*table, {id}), value);
    EXPECT_EQ(Version(*table, id), touched ? 1 : 0);
  }
  EXPECT_EQ(after.applies, 1);
  EXPECT_EQ(table->Stats().rows_applied, 2);
  EXPECT_EQ(table->Stats().rows_dropped, 0);
}

TEST(FixedTableTest, DuplicateIdsApplyOneAfterTheOther) {
  std::unique_ptr<Optimizer> momentum = MakeOpt("momentum");
  const EmbeddingTableConfig config = Fixed(4, 5);
  std::unique_ptr<EmbeddingTable> table = Make(config, *momentum);
  const std::vector<float> g1 = Grad(5, 1, 0), g2 = Grad(5, 1, 1);
  std::vector<float> grads = g1;
  grads.insert(grads.end(), g2.begin(), g2.end());
  const std::vector<float> scales = {1.0f, 0.5f};
  const std::vector<int64_t> ids = {1, 1};
  EXPECT_EQ(table->Apply(ids.data(), grads.data(), 2, scales.data()), 2);
  std::vector<float> value = Initial(config, 1), slots(5, 0.0f);
  momentum->ApplyRow(value.data(), slots.data(), g1.data(), 5, 1.0f, 0);
  momentum->ApplyRow(value.data(), slots.data(), g2.data(), 5, 0.5f, 0);
  EXPECT_EQ(PullRows(*table, {1}), value);
  EXPECT_EQ(Version(*table, 1), 2);
  EXPECT_EQ(Row(table->Export().slots, 0, 5), slots);  // id 1: the one row written
}

TEST(FixedTableTest, AdamCountsTheTablesApplies) {
  std::unique_ptr<Optimizer> adam = MakeOpt("adam");
  const EmbeddingTableConfig config = Fixed(4, 3);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adam);
  const std::vector<float> g = Grad(3, 0);
  ApplyRows(*table, {0}, g);
  ApplyRows(*table, {0}, g);
  ApplyRows(*table, {3}, g);  // row 3's first update, at the table's third apply
  std::vector<float> value = Initial(config, 3), slots(6, 0.0f);
  adam->ApplyRow(value.data(), slots.data(), g.data(), 3, 1.0f, /*updates=*/2);
  EXPECT_EQ(PullRows(*table, {3}), value);
  EXPECT_EQ(table->Export().applies, 3);
}

TEST(FixedTableTest, ExportImportRoundTrip) {
  std::unique_ptr<Optimizer> adam = MakeOpt("adam");
  const EmbeddingTableConfig config = Fixed(9, 4, /*shard=*/0, /*num_shards=*/3);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adam);
  ApplyRows(*table, {3, 6}, [] {
    std::vector<float> g = Grad(4, 3);
    std::vector<float> g6 = Grad(4, 6);
    g.insert(g.end(), g6.begin(), g6.end());
    return g;
  }());
  const EmbeddingRows exported = table->Export();
  EXPECT_EQ(exported.ids, (std::vector<int64_t>{3, 6})) << "only the rows written";
  std::unique_ptr<EmbeddingTable> restored = Make(config, *adam);
  ASSERT_TRUE(restored->Import(exported).ok());
  ExpectSameRows(restored->Export(), exported);
  EXPECT_EQ(PullRows(*restored, {0, 3, 6}), PullRows(*table, {0, 3, 6}));

  // A partial import: the rows it lacks are back to their initial state.
  EmbeddingRows only_3;
  only_3.ids = {3};
  only_3.values = Row(exported.values, 1, 4);
  only_3.slots.assign(exported.slots.begin() + 8, exported.slots.begin() + 16);
  only_3.versions = {1};
  only_3.applies = 1;
  ASSERT_TRUE(table->Import(only_3).ok());
  EXPECT_EQ(PullRows(*table, {6}), Initial(config, 6));
  EXPECT_EQ(Version(*table, 6), 0);
  EXPECT_EQ(PullRows(*table, {3}), Row(exported.values, 1, 4));
  EXPECT_EQ(Version(*table, 3), 1);
}

// The contract of a big fixed table: creating it writes nothing, so it
// takes no time and no resident memory; a row costs memory once applied.
TEST(FixedTableTest, TenMillionRowsCreateQuicklyWithoutResidentMemory) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  const int64_t rss0 = ResidentBytes();
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<EmbeddingTable> shard0 = Make(Fixed(10000000, 16, 0, 2), *adagrad);
  std::unique_ptr<EmbeddingTable> shard1 = Make(Fixed(10000000, 16, 1, 2), *adagrad);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t grown = ResidentBytes() - rss0;
  if (!kUnderAsan) {
    EXPECT_LT(seconds, 2.0);
    // The slabs are 2 x 640 MB of address space; the bitmaps 2 x 625 KB.
    EXPECT_LT(grown, 16 << 20) << "resident growth " << grown;
  }
  EXPECT_EQ(shard0->Stats().bytes, 5000000ull * 32 * sizeof(float));
  // The last row of each shard works.
  const std::vector<int64_t> last0 = {9999998}, last1 = {9999999};
  EXPECT_TRUE(shard0->CheckIds(last0.data(), 1).ok());
  EXPECT_EQ(ApplyRows(*shard1, last1, Grad(16, 1)), 1);
  EXPECT_EQ(Version(*shard1, 9999999), 1);
  EXPECT_EQ(PullRows(*shard0, last0), Initial(Fixed(10000000, 16, 0, 2), 9999998));
}

// ---------------------------------------------------------------- dynamic

TEST(DynamicTableTest, CreatesRowsOnFirstPull) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  const EmbeddingTableConfig config = Dynamic(100, 4);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adagrad);
  EXPECT_EQ(table->Stats().rows_held, 0);
  EXPECT_EQ(Version(*table, 123), 0);
  const std::vector<int64_t> ids = {123, -5, int64_t{1} << 62, 123};
  std::vector<int64_t> versions;
  const std::vector<float> rows = PullRows(*table, ids, &versions);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(Row(rows, i, 4), Initial(config, ids[i]));
    EXPECT_EQ(versions[i], 0);
  }
  EmbeddingTableStats stats = table->Stats();
  EXPECT_EQ(stats.rows_held, 3);
  EXPECT_EQ(stats.rows_created, 3);
  EXPECT_EQ(stats.rows_evicted, 0);
  EXPECT_EQ(stats.keys_refused, 0);
  EXPECT_EQ(stats.bytes, 3u * 2 * 4 * sizeof(float));
  // Apply to a key never pulled: not held, dropped.
  EXPECT_EQ(ApplyRows(*table, {999}, Grad(4, 999)), 0);
  EXPECT_EQ(table->Stats().rows_dropped, 1);
  EXPECT_EQ(table->Stats().rows_held, 3);
  // Apply to a held key.
  EXPECT_EQ(ApplyRows(*table, {-5}, Grad(4, -5)), 1);
  EXPECT_EQ(Version(*table, -5), 1);
  EXPECT_EQ(table->Stats().rows_applied, 1);
}

TEST(DynamicTableTest, SameSeedSameRowsInAnyOrder) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  const EmbeddingTableConfig config = Dynamic(10, 8);
  std::unique_ptr<EmbeddingTable> a = Make(config, *sgd);
  std::unique_ptr<EmbeddingTable> b = Make(config, *sgd);
  PullRows(*a, {1, 2, 3});
  PullRows(*b, {3, 2, 1});
  EXPECT_EQ(PullRows(*a, {1, 2, 3}), PullRows(*b, {1, 2, 3}));
  EmbeddingTableConfig other = config;
  other.seed = 8;
  std::unique_ptr<EmbeddingTable> c = Make(other, *sgd);
  EXPECT_NE(PullRows(*c, {1}), PullRows(*a, {1}));
}

TEST(DynamicTableTest, EvictsTheLeastRecentlyUsed) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  const EmbeddingTableConfig config = Dynamic(2, 2);
  std::unique_ptr<EmbeddingTable> table = Make(config, *sgd);
  DynamicEmbeddingTable& dynamic = AsDynamic(*table);
  const int64_t a = 10, b = 20, c = 30;
  PullRows(*table, {a, b});
  PullRows(*table, {c});  // a is the least recent
  EXPECT_EQ(dynamic.KeysByRecency(), (std::vector<int64_t>{b, c}));
  EXPECT_EQ(table->Stats().rows_evicted, 1);
  EXPECT_EQ(table->Stats().rows_held, 2);

  // A pull refreshes: b is pulled, so c is the one to go for a.
  PullRows(*table, {b});
  PullRows(*table, {a});
  EXPECT_EQ(dynamic.KeysByRecency(), (std::vector<int64_t>{b, a}));

  // An apply refreshes too: b applied, so a goes for c.
  EXPECT_EQ(ApplyRows(*table, {b}, Grad(2, b)), 1);
  PullRows(*table, {c});
  EXPECT_EQ(dynamic.KeysByRecency(), (std::vector<int64_t>{b, c}));
  EXPECT_EQ(table->Stats().rows_evicted, 3);
}

TEST(DynamicTableTest, AnEvictedRowStartsOverWhenPulledAgain) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  const EmbeddingTableConfig config = Dynamic(1, 3);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adagrad);
  PullRows(*table, {1});
  ApplyRows(*table, {1}, Grad(3, 1));
  EXPECT_NE(PullRows(*table, {1}), Initial(config, 1));
  EXPECT_EQ(Version(*table, 1), 1);
  PullRows(*table, {2});  // evicts 1
  EXPECT_EQ(Version(*table, 1), 0);
  EXPECT_EQ(ApplyRows(*table, {1}, Grad(3, 1)), 0);  // dropped: not held
  std::vector<int64_t> versions;
  EXPECT_EQ(PullRows(*table, {1}, &versions), Initial(config, 1));
  EXPECT_EQ(versions[0], 0);
  EXPECT_EQ(Row(table->Export().slots, 0, 3), std::vector<float>(3, 0.1f));
}

TEST(DynamicTableTest, AdmitsAKeyOnItsMinCountthPull) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  const EmbeddingTableConfig config = Dynamic(10, 4, /*min_count=*/3);
  std::unique_ptr<EmbeddingTable> table = Make(config, *sgd);
  const int64_t key = 77;
  for (int pull = 1; pull <= 2; ++pull) {
    SCOPED_TRACE("pull " + std::to_string(pull));
    std::vector<int64_t> versions;
    EXPECT_EQ(PullRows(*table, {key}, &versions), std::vector<float>(4, 0.0f));
    EXPECT_EQ(versions[0], 0);
    EXPECT_EQ(ApplyRows(*table, {key}, Grad(4, key)), 0);  // dropped
    EXPECT_EQ(table->Stats().rows_held, 0);
  }
  EmbeddingTableStats stats = table->Stats();
  EXPECT_EQ(stats.keys_refused, 2);
  EXPECT_EQ(stats.rows_dropped, 2);
  // The third pull admits it.
  EXPECT_EQ(PullRows(*table, {key}), Initial(config, key));
  EXPECT_EQ(ApplyRows(*table, {key}, Grad(4, key)), 1);
  EXPECT_EQ(Version(*table, key), 1);
  stats = table->Stats();
  EXPECT_EQ(stats.rows_held, 1);
  EXPECT_EQ(stats.rows_created, 1);
  EXPECT_EQ(stats.keys_refused, 2);
  EXPECT_EQ(stats.rows_dropped, 2);
  EXPECT_EQ(stats.rows_applied, 1);
  // Another key is counted on its own; duplicates in one pull count each.
  std::vector<int64_t> versions;
  const std::vector<float> rows = PullRows(*table, {5, 5, 5}, &versions);
  EXPECT_EQ(Row(rows, 0, 4), std::vector<float>(4, 0.0f));
  EXPECT_EQ(Row(rows, 1, 4), std::vector<float>(4, 0.0f));
  EXPECT_EQ(Row(rows, 2, 4), Initial(config, 5));
}

TEST(DynamicTableTest, CheckIdsWantsKeysOfThisShard) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  EmbeddingTableConfig config = Dynamic(10, 2);
  config.shard = 1;
  config.num_shards = 3;
  std::unique_ptr<EmbeddingTable> table = Make(config, *sgd);
  // Any key whose unsigned value is 1 mod 3. 2^64 = 1 mod 3, so -3 (the
  // word 2^64 - 3) is 1 mod 3 and -1 (2^64 - 1) is 0 mod 3.
  const std::vector<int64_t> good = {1, 4, int64_t{1} << 40, -3};
  EXPECT_EQ((int64_t{1} << 40) % 3, 1);
  EXPECT_TRUE(table->CheckIds(good.data(), 4).ok());
  const std::vector<int64_t> bad = {4, 5};
  Status status = table->CheckIds(bad.data(), 2);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "table 'emb/dynamic': id 5 belongs to shard 2, not this shard 1");
  const std::vector<int64_t> negative = {-1};  // 2^64 - 1 = 0 mod 3
  EXPECT_EQ(table->CheckIds(negative.data(), 1).message(),
            "table 'emb/dynamic': id -1 belongs to shard 0, not this shard 1");
}

// A reference LRU (std::list + map) fed the same stream: the table must
// hold exactly its keys, in its order, at every step.
TEST(DynamicTableTest, RandomStreamMatchesAReferenceLruAndNeverExceedsCapacity) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  constexpr int64_t kCapacity = 1000, kDim = 4;
  const EmbeddingTableConfig config = Dynamic(kCapacity, kDim);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adagrad);
  DynamicEmbeddingTable& dynamic = AsDynamic(*table);

  std::list<int64_t> lru;  // most recent first
  std::unordered_map<int64_t, std::list<int64_t>::iterator> where;
  std::unordered_map<int64_t, int64_t> version;  // of the keys held
  std::vector<int64_t> evicted;
  auto touch = [&](int64_t key) {
    auto it = where.find(key);
    if (it != where.end()) lru.erase(it->second);
    lru.push_front(key);
    where[key] = lru.begin();
    if (static_cast<int64_t>(lru.size()) > kCapacity) {
      evicted.push_back(lru.back());
      where.erase(lru.back());
      version.erase(lru.back());
      lru.pop_back();
    }
  };

  std::mt19937_64 rng(1);
  // Keys from a range 3x the capacity (hits and misses both), some negative.
  std::uniform_int_distribution<int64_t> pick(-1500, 1499);
  int64_t pulled = 0;
  std::vector<int64_t> ids;
  std::vector<float> rows, grads;
  std::vector<int64_t> versions;
  while (pulled < 100000) {
    ids.clear();
    for (int i = 0; i < 50; ++i) ids.push_back(pick(rng) * 7919);  // spread the keys
    rows.resize(ids.size() * kDim);
    versions.resize(ids.size());
    table->Pull(ids.data(), ids.size(), rows.data(), versions.data());
    for (int64_t key : ids) touch(key);
    pulled += ids.size();
    // Apply to every other pulled key: all held, since a batch of 50 cannot
    // evict a key it pulled.
    std::vector<int64_t> apply_ids;
    for (size_t i = 0; i < ids.size(); i += 2) apply_ids.push_back(ids[i]);
    grads.assign(apply_ids.size() * kDim, 0.01f);
    EXPECT_EQ(table->Apply(apply_ids.data(), grads.data(), apply_ids.size(), nullptr),
              static_cast<int64_t>(apply_ids.size()));
    for (int64_t key : apply_ids) {
      touch(key);
      ++version[key];
    }
    ASSERT_LE(table->Stats().rows_held, kCapacity);
  }
  const EmbeddingTableStats stats = table->Stats();
  EXPECT_EQ(stats.rows_held, kCapacity);
  EXPECT_EQ(stats.rows_created - stats.rows_evicted, stats.rows_held);
  EXPECT_GT(stats.rows_evicted, 10000);
  const std::vector<int64_t> expected(lru.rbegin(), lru.rend());
  EXPECT_EQ(dynamic.KeysByRecency(), expected);
  // Every held key is found through the index with its version (no key
  // lost by a backward shift), and evicted ones (not held again) are not.
  std::vector<int64_t> held = expected;
  std::vector<int64_t> held_versions(held.size());
  table->Versions(held.data(), held.size(), held_versions.data());
  int64_t applied_rows_held = 0;
  for (size_t i = 0; i < held.size(); ++i) {
    const int64_t want = version.count(held[i]) ? version[held[i]] : 0;
    ASSERT_EQ(held_versions[i], want) << "key " << held[i];
    applied_rows_held += want > 0;
  }
  EXPECT_GT(applied_rows_held, kCapacity / 4);
  for (int64_t key : evicted) {
    if (where.count(key) == 0) ASSERT_EQ(Version(*table, key), 0) << "key " << key;
  }
  std::sort(held.begin(), held.end());
  EXPECT_EQ(table->Export().ids, held);
}

TEST(DynamicTableTest, ExportImportRoundTrip) {
  std::unique_ptr<Optimizer> adam = MakeOpt("adam");
  const EmbeddingTableConfig config = Dynamic(5, 3);
  std::unique_ptr<EmbeddingTable> table = Make(config, *adam);
  const std::vector<int64_t> keys = {40, -2, 17, 3};
  PullRows(*table, keys);
  std::vector<float> grads;
  for (int64_t key : keys) {
    const std::vector<float> g = Grad(3, key);
    grads.insert(grads.end(), g.begin(), g.end());
  }
  ApplyRows(*table, keys, grads);
  ApplyRows(*table, {17}, Grad(3, 17, 1));
  const EmbeddingRows exported = table->Export();
  EXPECT_EQ(exported.ids, (std::vector<int64_t>{-2, 3, 17, 40}));
  EXPECT_EQ(exported.versions, (std::vector<int64_t>{1, 1, 2, 1}));
  EXPECT_EQ(exported.applies, 2);
  EXPECT_EQ(exported.slots.size(), 4u * 6);

  std::unique_ptr<EmbeddingTable> restored = Make(config, *adam);
  ASSERT_TRUE(restored->Import(exported).ok());
  ExpectSameRows(restored->Export(), exported);
  EXPECT_EQ(restored->Stats().rows_held, 4);
  std::vector<int64_t> v1, v2;
  EXPECT_EQ(PullRows(*restored, keys, &v1), PullRows(*table, keys, &v2));
  EXPECT_EQ(v1, v2);
  // The restored table goes on as the original does (Adam's t included).
  ApplyRows(*table, {3}, Grad(3, 3, 2));
  ApplyRows(*restored, {3}, Grad(3, 3, 2));
  ExpectSameRows(restored->Export(), table->Export());
  // LRU order after an import: the imported order, last most recent.
  EXPECT_EQ(AsDynamic(*restored).KeysByRecency().size(), 4u);
  // An import replaces: importing nothing empties the table.
  ASSERT_TRUE(restored->Import(EmbeddingRows{}).ok());
  EXPECT_EQ(restored->Stats().rows_held, 0);
  EXPECT_EQ(Version(*restored, 3), 0);
}

TEST(DynamicTableTest, ImportRefusesBadRowsAndChangesNothing) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  EmbeddingTableConfig config = Dynamic(3, 2);
  config.num_shards = 2;  // shard 0: even keys
  std::unique_ptr<EmbeddingTable> table = Make(config, *adagrad);
  PullRows(*table, {2, 4});
  ApplyRows(*table, {2}, Grad(2, 2));
  const EmbeddingRows before = table->Export();

  EmbeddingRows good;
  good.ids = {6, 8};
  good.values = {1, 2, 3, 4};
  good.slots = {0.5f, 0.5f, 0.5f, 0.5f};
  good.versions = {3, 4};
  good.applies = 9;

  struct Case {
    const char* what;
    EmbeddingRows rows;
    std::string expect;
  };
  std::vector<Case> cases;
  EmbeddingRows r = good;
  r.values.pop_back();
  cases.push_back({"short values", r, "3 values for 2 rows of dim 2"});
  r = good;
  r.slots.push_back(0);
  cases.push_back({"long slots", r, "5 slot floats for 2 rows of 2"});
  r = good;
  r.versions = {3};
  cases.push_back({"versions", r, "1 versions for 2 rows"});
  r = good;
  r.ids = {6, 7};
  cases.push_back({"other shard", r, "id 7 belongs to shard 1, not this shard 0"});
  r = good;
  r.ids = {6, 6};
  cases.push_back({"duplicate", r, "id 6 repeats"});
  r = good;
  r.versions = {3, -1};
  cases.push_back({"negative version", r, "version -1"});
  r = good;
  r.applies = -1;
  cases.push_back({"negative applies", r, "applies -1"});
  r = good;
  r.ids = {6, 8, 10, 12};
  r.values.assign(8, 1.0f);
  r.slots.assign(8, 1.0f);
  r.versions = {1, 1, 1, 1};
  cases.push_back({"too many rows", r, "4 rows exceed the capacity 3"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Status status = table->Import(c.rows);
    EXPECT_EQ(status.code(), Code::kDataLoss);
    EXPECT_NE(status.message().find("table 'emb/dynamic'"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(c.expect), std::string::npos) << status.message();
    ExpectSameRows(table->Export(), before);
  }
  ASSERT_TRUE(table->Import(good).ok());
  EXPECT_EQ(table->Export().ids, (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(PullRows(*table, {8}), (std::vector<float>{3, 4}));
  EXPECT_EQ(Version(*table, 8), 4);
  EXPECT_EQ(Version(*table, 2), 0);
}

TEST(FixedTableTest, ImportRefusesIdsOutOfRange) {
  std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  std::unique_ptr<EmbeddingTable> table = Make(Fixed(4, 1), *sgd);
  const EmbeddingRows before = table->Export();
  EmbeddingRows rows;
  rows.ids = {1, 4};
  rows.values = {1, 2};
  rows.versions = {1, 1};
  Status status = table->Import(rows);
  EXPECT_EQ(status.code(), Code::kDataLoss);
  EXPECT_NE(status.message().find("table 'emb/fixed'"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("id 4 is out of range [0, 4)"), std::string::npos)
      << status.message();
  ExpectSameRows(table->Export(), before);
}

TEST(DynamicTableTest, CreatingALargeTableTakesNoResidentMemory) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  const int64_t rss0 = ResidentBytes();
  // 1e6 rows x 16 x (1 + 1) floats: a 128 MB slab, plus keys, versions, links.
  std::unique_ptr<EmbeddingTable> table = Make(Dynamic(1000000, 16), *adagrad);
  const int64_t grown = ResidentBytes() - rss0;
  // Only the index is written at creation: 2^21 int32 = 8 MB.
  EXPECT_EQ(AsDynamic(*table).overhead_bytes(), 8u << 20);
  if (!kUnderAsan) EXPECT_LT(grown, 16 << 20) << "resident growth " << grown;
  std::vector<int64_t> ids(1000);
  for (int i = 0; i < 1000; ++i) ids[i] = i * 1000003;
  PullRows(*table, ids);
  if (!kUnderAsan) EXPECT_LT(ResidentBytes() - rss0, 20 << 20);
  EXPECT_EQ(table->Stats().bytes, 1000u * 128);
}

TEST(CountMinSketchTest, ExactForFewKeysAndAges) {
  CountMinSketch sketch(4096);
  EXPECT_EQ(sketch.width(), 4096);
  EXPECT_EQ(sketch.bytes(), 4u * 4096 * 2);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sketch.Add(1), i + 1);
  EXPECT_EQ(sketch.Add(2), 1);
  EXPECT_EQ(sketch.Estimate(1), 5);
  EXPECT_EQ(sketch.Estimate(2), 1);
  EXPECT_EQ(sketch.Estimate(3), 0);
  // The 4096-th sighting (width) halves every counter: 1's 4095 to 2047,
  // 2's 1 to 0.
  for (int i = 5; i < 4096 - 1; ++i) sketch.Add(1);
  EXPECT_EQ(sketch.Estimate(1), 2047);
  EXPECT_EQ(sketch.Estimate(2), 0);
  sketch.Clear();
  EXPECT_EQ(sketch.Estimate(1), 0);
}

// Pulls and applies from several threads at once, on a dynamic table small
// enough to evict all the time and on a fixed one: no crash, and the
// counters add up.
TEST(EmbeddingTableThreadsTest, ConcurrentPullAndApply) {
  std::unique_ptr<Optimizer> adagrad = MakeOpt("adagrad");
  std::unique_ptr<EmbeddingTable> dynamic = Make(Dynamic(64, 8, /*min_count=*/2), *adagrad);
  std::unique_ptr<EmbeddingTable> fixed = Make(Fixed(200, 8), *adagrad);
  constexpr int kThreads = 4, kRounds = 2000, kBatch = 16;
  std::atomic<int64_t> applied_dynamic{0}, applied_fixed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::uniform_int_distribution<int64_t> pick(0, 199);
      std::vector<int64_t> ids(kBatch), versions(kBatch);
      std::vector<float> rows(kBatch * 8), grads(kBatch * 8, 0.01f);
      for (int round = 0; round < kRounds; ++round) {
        for (int64_t& id : ids) id = pick(rng);
        for (EmbeddingTable* table : {dynamic.get(), fixed.get()}) {
          table->Pull(ids.data(), kBatch, rows.data(), versions.data());
          for (float x : rows) ASSERT_TRUE(std::isfinite(x));
          const int64_t n = table->Apply(ids.data(), grads.data(), kBatch, nullptr);
          (table == fixed.get() ? applied_fixed : applied_dynamic) += n;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const EmbeddingTableStats d = dynamic->Stats(), f = fixed->Stats();
  EXPECT_LE(d.rows_held, 64);
  EXPECT_EQ(d.rows_applied, applied_dynamic.load());
  EXPECT_EQ(d.rows_applied + d.rows_dropped, int64_t{kThreads} * kRounds * kBatch);
  EXPECT_EQ(d.rows_created - d.rows_evicted, d.rows_held);
  EXPECT_EQ(f.rows_applied, int64_t{kThreads} * kRounds * kBatch);
  EXPECT_EQ(applied_fixed.load(), f.rows_applied);
  // Every fixed row's version counts its applies.
  const EmbeddingRows rows = fixed->Export();
  int64_t total = 0;
  for (int64_t v : rows.versions) total += v;
  EXPECT_EQ(total, f.rows_applied);
  EXPECT_EQ(rows.applies, int64_t{kThreads} * kRounds);
}

// --embedding_l2: SGD at rate 0.1 with L2 0.5 moves a touched row by
// -0.1 * (g + 0.5 * row), worked by hand; untouched rows keep their initial
// values, in both kinds of table.
TEST(EmbeddingTableTest, L2IsAppliedToTheTouchedRowsOnly) {
  const std::unique_ptr<Optimizer> sgd = MakeOpt("sgd", 0.1f);
  for (EmbeddingTableConfig config : {Fixed(8, 2), Dynamic(8, 2)}) {
    SCOPED_TRACE(config.name);
    config.l2 = 0.5f;
    std::unique_ptr<EmbeddingTable> table = Make(config, *sgd);
    PullRows(*table, {3, 5});  // a dynamic table creates rows on pulls
    const std::vector<float> g = {1.0f, -2.0f};
    ASSERT_EQ(ApplyRows(*table, {3}, g), 1);
    const std::vector<float> before = Initial(config, 3);
    const std::vector<float> expected = {before[0] - 0.1f * (1.0f + 0.5f * before[0]),
                                         before[1] - 0.1f * (-2.0f + 0.5f * before[1])};
    const std::vector<float> after = PullRows(*table, {3});
    EXPECT_NEAR(after[0], expected[0], 1e-6);
    EXPECT_NEAR(after[1], expected[1], 1e-6);
    EXPECT_EQ(PullRows(*table, {5}), Initial(config, 5));
  }
}

TEST(EmbeddingTableTest, RefusesANegativeOrNonFiniteL2) {
  const std::unique_ptr<Optimizer> sgd = MakeOpt("sgd");
  for (float l2 : {-1.0f, std::nanf("")}) {
    EmbeddingTableConfig config = Fixed(8, 2);
    config.l2 = l2;
    StatusOr<std::unique_ptr<EmbeddingTable>> table = EmbeddingTable::Create(config, *sgd);
    ASSERT_FALSE(table.ok());
    EXPECT_NE(table.status().message().find("l2"), std::string::npos) << table.status().message();
  }
}

}  // namespace
}  // namespace pst
