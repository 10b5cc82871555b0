#include "ps/sparse/changed_rows.h"

#include <gtest/gtest.h>

#include <thread>

namespace pst {
namespace {

EmbeddingTableConfig Fixed(int64_t rows, int shard, int num_shards) {
  EmbeddingTableConfig c;
  c.name = "t";
  c.dim = 2;
  c.rows = rows;
  c.shard = shard;
  c.num_shards = num_shards;
  return c;
}

TEST(ChangedRowsTest, NothingIsTrackedBeforeTheFirstCut) {
  ChangedRows changed(Fixed(100, 1, 2));
  const int64_t ids[] = {1, 3};
  changed.Mark(ids, 2);
  EXPECT_TRUE(changed.Cut().empty());
  changed.Mark(ids, 1);
  EXPECT_EQ(changed.Cut(), (std::vector<int64_t>{1}));
  EXPECT_TRUE(changed.Cut().empty());  // cleared by the cut
}

TEST(ChangedRowsTest, AFixedTableGivesEachRowOnceAscending) {
  ChangedRows changed(Fixed(1000, 1, 3));  // rows 1, 4, 7, ... of 1000
  changed.Cut();
  const int64_t ids[] = {997, 4, 1, 4, 130, 997};
  changed.Mark(ids, 6);
  EXPECT_EQ(changed.Cut(), (std::vector<int64_t>{1, 4, 130, 997}));
}

// Rows marked while cuts run land in exactly one cut.
TEST(ChangedRowsTest, EveryMarkWhileCuttingIsInOneCut) {
  ChangedRows changed(Fixed(1 << 16, 0, 1));
  changed.Cut();
  std::thread writer([&] {
    for (int64_t id = 0; id < (1 << 16); ++id) changed.Mark(&id, 1);
  });
  std::vector<int> seen(1 << 16, 0);
  for (int i = 0; i < 50; ++i) {
    for (const int64_t id : changed.Cut()) ++seen[id];
  }
  writer.join();
  for (const int64_t id : changed.Cut()) ++seen[id];
  for (int64_t id = 0; id < (1 << 16); ++id) ASSERT_EQ(seen[id], 1) << id;
}

}  // namespace
}  // namespace pst
