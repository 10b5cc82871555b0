#include "ps/sparse/sparse_accumulator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace pst {
namespace {

TEST(SparseAccumulatorTest, SumsIdsOverlappingAcrossPushes) {
  SparseAccumulator acc(2);
  const std::vector<int64_t> ids1 = {5, 1};
  const std::vector<float> rows1 = {1, 2, 3, 4};
  const std::vector<int64_t> ids2 = {1, 9};
  const std::vector<float> rows2 = {10, 20, 30, 40};
  acc.Add(ids1.data(), rows1.data(), 2);
  acc.Add(ids2.data(), rows2.data(), 2);
  EXPECT_EQ(acc.size(), 3);
  std::vector<int64_t> ids;
  std::vector<float> rows;
  acc.TakeMean(2, &ids, &rows);
  // Ascending ids; every row divided by N = 2, also rows only one push had.
  EXPECT_EQ(ids, (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(rows, (std::vector<float>{6.5f, 12, 0.5f, 1, 15, 20}));
  EXPECT_EQ(acc.size(), 0);  // taken
}

TEST(SparseAccumulatorTest, SumsDuplicatesInsideOnePush) {
  SparseAccumulator acc(3);
  const std::vector<int64_t> ids = {-4, 7, -4, -4};
  const std::vector<float> rows = {1, 1, 1, 2, 2, 2, 0.5f, 0.25f, 0, 1, 0, -1};
  acc.Add(ids.data(), rows.data(), 4);
  EXPECT_EQ(acc.size(), 2);
  std::vector<int64_t> out_ids;
  std::vector<float> out_rows;
  acc.TakeMean(1, &out_ids, &out_rows);
  EXPECT_EQ(out_ids, (std::vector<int64_t>{-4, 7}));
  EXPECT_EQ(out_rows, (std::vector<float>{2.5f, 1.25f, 0, 2, 2, 2}));
}

TEST(SparseAccumulatorTest, MeanIsByTheNumberOfGradientsNotOfContributors) {
  // N = 3 gradients, only one of which touched id 2: its row is divided by 3
  // (TF's SparseConditionalAccumulator would divide by 1), with the dense
  // accumulator's arithmetic: the sum times the float 1/N.
  SparseAccumulator acc(1);
  const std::vector<int64_t> a = {1, 2}, b = {1}, c = {1};
  const std::vector<float> ra = {0.1f, 0.7f}, rb = {0.2f}, rc = {0.4f};
  acc.Add(a.data(), ra.data(), 2);
  acc.Add(b.data(), rb.data(), 1);
  acc.Add(c.data(), rc.data(), 1);
  std::vector<int64_t> ids;
  std::vector<float> rows;
  acc.TakeMean(3, &ids, &rows);
  ASSERT_EQ(ids, (std::vector<int64_t>{1, 2}));
  const float third = 1.0f / 3;
  EXPECT_EQ(rows[0], ((0.1f + 0.2f) + 0.4f) * third);
  EXPECT_EQ(rows[1], 0.7f * third);
  EXPECT_NEAR(rows[0], 0.7f / 3, 1e-7);
}

TEST(SparseAccumulatorTest, ClearEmptiesAndTheAccumulatorIsReusable) {
  SparseAccumulator acc(2);
  const std::vector<int64_t> ids = {3};
  const std::vector<float> rows = {1, 2};
  acc.Add(ids.data(), rows.data(), 1);
  acc.Clear();
  EXPECT_EQ(acc.size(), 0);
  std::vector<int64_t> out_ids = {99};
  std::vector<float> out_rows = {99};
  acc.TakeMean(4, &out_ids, &out_rows);
  EXPECT_TRUE(out_ids.empty());
  EXPECT_TRUE(out_rows.empty());
  // After a clear, a new step starts from zero.
  acc.Add(ids.data(), rows.data(), 1);
  acc.TakeMean(4, &out_ids, &out_rows);
  EXPECT_EQ(out_ids, ids);
  EXPECT_EQ(out_rows, (std::vector<float>{0.25f, 0.5f}));
}

TEST(SparseAccumulatorDeathTest, NeedsAPositiveGradientCount) {
  SparseAccumulator acc(1);
  std::vector<int64_t> ids;
  std::vector<float> rows;
  EXPECT_DEATH(acc.TakeMean(0, &ids, &rows), "gradients");
}

}  // namespace
}  // namespace pst
