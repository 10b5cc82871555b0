// A dynamic table's rows for model files and the incremental export:
// ListRows pages through every row held, CutChanged reports the rows
// created or written since the last cut and the keys evicted.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "model/ctr/initial_row.h"
#include "ps/optimizers/optimizer.h"
#include "ps/sparse/dynamic_embedding_table.h"
#include "ps/sparse/embedding_table.h"

namespace pst {
namespace {

constexpr int64_t kDim = 3;

class DynamicTableExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OptimizerConfig opt;
    opt.name = "sgd";
    opt.learning_rate = 0.5f;
    optimizer_ = std::move(MakeOptimizer(opt)).value();
  }
  std::unique_ptr<EmbeddingTable> Make(int64_t capacity) {
    EmbeddingTableConfig config;
    config.name = "emb/dynamic";
    config.dim = kDim;
    config.capacity = capacity;
    config.seed = 7;
    return std::move(EmbeddingTable::Create(config, *optimizer_)).value();
  }
  static void Pull(EmbeddingTable& table, const std::vector<int64_t>& keys) {
    std::vector<float> rows(keys.size() * kDim);
    std::vector<int64_t> versions(keys.size());
    table.Pull(keys.data(), static_cast<int64_t>(keys.size()), rows.data(), versions.data());
  }
  static void Apply(EmbeddingTable& table, const std::vector<int64_t>& keys) {
    const std::vector<float> grads(keys.size() * kDim, 1.0f);
    table.Apply(keys.data(), grads.data(), static_cast<int64_t>(keys.size()), nullptr);
  }
  // Every row by listing `at_a_time` rows per call.
  static std::map<int64_t, std::vector<float>> ListAll(EmbeddingTable& table, int64_t at_a_time,
                                                       int* calls) {
    std::map<int64_t, std::vector<float>> rows;
    *calls = 0;
    for (int64_t cursor = 0; cursor >= 0; ++*calls) {
      std::vector<int64_t> ids;
      std::vector<float> values;
      StatusOr<int64_t> next = table.ListRows(cursor, at_a_time, &ids, &values);
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok()) break;
      EXPECT_LE(static_cast<int64_t>(ids.size()), at_a_time);
      for (size_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(rows.count(ids[i]), 0u) << "key " << ids[i] << " listed twice";
        rows[ids[i]].assign(values.begin() + i * kDim, values.begin() + (i + 1) * kDim);
      }
      cursor = *next;
    }
    return rows;
  }

  std::unique_ptr<Optimizer> optimizer_;
};

TEST_F(DynamicTableExportTest, ListRowsPagesThroughEveryRowOnce) {
  std::unique_ptr<EmbeddingTable> table = Make(100);
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 25; ++k) keys.push_back(k * 1000003 - 7);
  Pull(*table, keys);
  Apply(*table, {keys[3], keys[3], keys[20]});
  int calls = 0;
  const std::map<int64_t, std::vector<float>> listed = ListAll(*table, 7, &calls);
  EXPECT_EQ(calls, 4);  // 7 + 7 + 7 + 4
  const EmbeddingRows exported = table->Export();
  ASSERT_EQ(listed.size(), exported.ids.size());
  for (size_t i = 0; i < exported.ids.size(); ++i) {
    const std::vector<float> expected(exported.values.begin() + i * kDim,
                                      exported.values.begin() + (i + 1) * kDim);
    EXPECT_EQ(listed.at(exported.ids[i]), expected) << "key " << exported.ids[i];
  }
  std::vector<int64_t> ids;
  std::vector<float> values;
  EXPECT_FALSE(table->ListRows(-1, 7, &ids, &values).ok());
  EXPECT_FALSE(table->ListRows(0, 0, &ids, &values).ok());
  // An empty table lists nothing, in one call.
  EXPECT_EQ(ListAll(*Make(10), 7, &calls).size(), 0u);
  EXPECT_EQ(calls, 1);
}

TEST_F(DynamicTableExportTest, CutReportsCreatedWrittenAndEvictedKeys) {
  std::unique_ptr<EmbeddingTable> table = Make(4);
  Pull(*table, {1, 2, 3});
  // The first cut starts the count: nothing before it is reported.
  StatusOr<DynamicCut> cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_TRUE(cut->ids.empty());
  EXPECT_TRUE(cut->removed.empty());

  Apply(*table, {2});
  Pull(*table, {4, 5});  // 4 fills the table; 5 evicts the least recent: 1
  cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok());
  const std::set<int64_t> changed(cut->ids.begin(), cut->ids.end());
  EXPECT_EQ(changed, (std::set<int64_t>{2, 4, 5}));
  EXPECT_EQ(cut->removed, (std::vector<int64_t>{1}));
  // Each row is the table's now.
  ASSERT_EQ(cut->values.size(), cut->ids.size() * kDim);
  int calls = 0;
  const std::map<int64_t, std::vector<float>> now = ListAll(*table, 100, &calls);
  for (size_t i = 0; i < cut->ids.size(); ++i) {
    const std::vector<float> row(cut->values.begin() + i * kDim,
                                 cut->values.begin() + (i + 1) * kDim);
    EXPECT_EQ(now.at(cut->ids[i]), row) << "key " << cut->ids[i];
  }

  // Nothing changed since: an empty cut.
  cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->ids.empty());
  EXPECT_TRUE(cut->removed.empty());

  // A key evicted and created again is in both lists.
  Pull(*table, {6, 1});  // 6 evicts 3, 1 evicts 2
  Apply(*table, {1});
  cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(std::set<int64_t>(cut->ids.begin(), cut->ids.end()), (std::set<int64_t>{6, 1}));
  EXPECT_EQ(std::set<int64_t>(cut->removed.begin(), cut->removed.end()), (std::set<int64_t>{3, 2}));

  // A base's cut (no values) only restarts the count.
  Apply(*table, {5});
  cut = table->CutChanged(false);
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->ids.empty());
  cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->ids.empty());
}

TEST_F(DynamicTableExportTest, ImportClearsWhatWasTracked) {
  std::unique_ptr<EmbeddingTable> table = Make(8);
  ASSERT_TRUE(table->CutChanged(true).ok());
  Pull(*table, {1, 2});
  const EmbeddingRows saved = table->Export();
  Pull(*table, {3});
  ASSERT_TRUE(table->Import(saved).ok());
  StatusOr<DynamicCut> cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->ids.empty());
  Apply(*table, {2});
  cut = table->CutChanged(true);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->ids, (std::vector<int64_t>{2}));
}

TEST_F(DynamicTableExportTest, PeekReadsWithoutCreatingEvictingOrCounting) {
  for (const int64_t min_count : {1, 2}) {
    EmbeddingTableConfig config;
    config.name = "emb/dynamic";
    config.dim = kDim;
    config.capacity = 2;
    config.min_count = min_count;
    config.seed = 7;
    std::unique_ptr<EmbeddingTable> table =
        std::move(EmbeddingTable::Create(config, *optimizer_)).value();
    Pull(*table, {1, 2, 1, 2});  // held (min_count 2 admits them on their second pull)
    Apply(*table, {1});
    const std::vector<int64_t> keys = {3, 1, 3, 4};
    std::vector<float> rows(keys.size() * kDim);
    std::vector<int64_t> versions(keys.size());
    table->Peek(keys.data(), 4, rows.data(), versions.data());
    EXPECT_EQ(versions, (std::vector<int64_t>{0, 1, 0, 0}));
    std::vector<float> absent(kDim, 0.0f);
    if (min_count == 1) InitialRow(7, "emb/dynamic", 3, config.init_scale, kDim, absent.data());
    EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + kDim), absent) << min_count;
    // Nothing changed: the same rows, no row created, evicted or refused,
    // and key 2 is still the least recently used.
    const EmbeddingTableStats stats = table->Stats();
    EXPECT_EQ(stats.rows_created, 2);
    EXPECT_EQ(stats.rows_evicted, 0);
    EXPECT_EQ(stats.keys_refused, min_count == 1 ? 0 : 2);  // the first pulls of 1 and 2
    EXPECT_EQ(static_cast<DynamicEmbeddingTable&>(*table).KeysByRecency(),
              (std::vector<int64_t>{2, 1}));
  }
}

TEST(FixedTableExportTest, AFixedTableIsNotListed) {
  OptimizerConfig opt;
  opt.name = "sgd";
  std::unique_ptr<Optimizer> optimizer = std::move(MakeOptimizer(opt)).value();
  EmbeddingTableConfig config;
  config.name = "emb/fixed";
  config.dim = 2;
  config.rows = 10;
  std::unique_ptr<EmbeddingTable> table =
      std::move(EmbeddingTable::Create(config, *optimizer)).value();
  std::vector<int64_t> ids;
  std::vector<float> values;
  const StatusOr<int64_t> listed = table->ListRows(0, 5, &ids, &values);
  ASSERT_FALSE(listed.ok());
  EXPECT_NE(listed.status().message().find("emb/fixed"), std::string::npos);
}

}  // namespace
}  // namespace pst
