#include "model/ctr/row_slots.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace pst {
namespace {

TEST(RowSlotsTest, NumbersDistinctRowsInTheOrderFirstSeen) {
  RowSlots slots(4);
  EXPECT_EQ(slots.Insert(70), std::make_pair(0, true));
  EXPECT_EQ(slots.Insert(-3), std::make_pair(1, true));
  EXPECT_EQ(slots.Insert(70), std::make_pair(0, false));
  EXPECT_EQ(slots.Insert(0), std::make_pair(2, true));
  EXPECT_EQ(slots.Insert(-3), std::make_pair(1, false));
  EXPECT_EQ(slots.size(), 3);
}

TEST(RowSlotsTest, AgreesWithAMapWhenFull) {
  // As many distinct ids as it was made for, from a range that makes them
  // collide in the table, each seen several times.
  std::mt19937_64 random(5);
  std::uniform_int_distribution<int64_t> id(-1000, 1000);
  for (const size_t max_rows : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
    RowSlots slots(max_rows);
    std::map<int64_t, int32_t> expected;
    while (expected.size() < max_rows) {
      const int64_t row = id(random) * 4096;
      const auto [slot, added] = slots.Insert(row);
      const auto [it, new_row] = expected.emplace(row, static_cast<int32_t>(expected.size()));
      EXPECT_EQ(added, new_row) << row;
      EXPECT_EQ(slot, it->second) << row;
    }
    EXPECT_EQ(slots.size(), static_cast<int32_t>(max_rows));
  }
}

}  // namespace
}  // namespace pst
