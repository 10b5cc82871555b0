#include <gtest/gtest.h>

#include <set>

#include "data/standardize.h"
#include "data/validation_split.h"

namespace pst {
namespace {

// Example i has the single feature i and label i % 3.
Dataset Numbered(int64_t n) {
  Dataset d;
  d.size = n;
  d.feature_dim = 1;
  d.num_classes = 3;
  for (int64_t i = 0; i < n; ++i) {
    d.features.push_back(static_cast<float>(i));
    d.labels.push_back(static_cast<int32_t>(i % 3));
  }
  return d;
}

std::set<float> Features(const Dataset& d) { return {d.features.begin(), d.features.end()}; }

TEST(ValidationSplitTest, SameSeedSameSplitDisjointFromTraining) {
  Dataset a = Numbered(1000), b = Numbered(1000);
  StatusOr<Dataset> va = SplitValidation(&a, 100, 7);
  StatusOr<Dataset> vb = SplitValidation(&b, 100, 7);
  ASSERT_TRUE(va.ok() && vb.ok());
  EXPECT_EQ(va->size, 100);
  EXPECT_EQ(a.size, 900);
  EXPECT_EQ(va->features, vb->features);  // every task holds out the same examples
  EXPECT_EQ(a.features, b.features);
  const std::set<float> held = Features(*va), kept = Features(a);
  EXPECT_EQ(held.size(), 100u);
  for (float f : held) EXPECT_EQ(kept.count(f), 0u) << f;
  EXPECT_EQ(held.size() + kept.size(), 1000u);
  for (int64_t i = 0; i < va->size; ++i) {
    EXPECT_EQ(va->labels[i], static_cast<int32_t>(va->features[i]) % 3);  // rows stay whole
  }
  Dataset c = Numbered(1000);
  EXPECT_NE(SplitValidation(&c, 100, 8)->features, va->features);  // the seed matters
}

// Numbered(n) plus sparse entries: example i has i % 3 entries (none for
// some), entry j with key 1000 * i + j, field j and value -i.
Dataset NumberedSparse(int64_t n) {
  Dataset d = Numbered(n);
  d.num_fields = 2;
  d.sparse_offsets = {0};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i % 3; ++j) {
      d.sparse_keys.push_back(1000 * i + j);
      d.sparse_fields.push_back(static_cast<int32_t>(j));
      d.sparse_values.push_back(static_cast<float>(-i));
    }
    d.sparse_offsets.push_back(static_cast<int64_t>(d.sparse_keys.size()));
  }
  return d;
}

// Each example of `d` has the sparse entries NumberedSparse gave it.
void ExpectSparseRowsWhole(const Dataset& d) {
  EXPECT_EQ(d.num_fields, 2);
  ASSERT_EQ(d.sparse_offsets.size(), static_cast<size_t>(d.size + 1));
  EXPECT_EQ(d.sparse_offsets[0], 0);
  const size_t entries = static_cast<size_t>(d.sparse_offsets.back());
  ASSERT_EQ(d.sparse_keys.size(), entries);
  ASSERT_EQ(d.sparse_fields.size(), entries);
  ASSERT_EQ(d.sparse_values.size(), entries);
  for (int64_t k = 0; k < d.size; ++k) {
    const int64_t i = static_cast<int64_t>(d.features[k]);
    const int64_t begin = d.sparse_offsets[k];
    ASSERT_EQ(d.sparse_offsets[k + 1] - begin, i % 3) << "example " << i;
    for (int64_t j = 0; j < i % 3; ++j) {
      EXPECT_EQ(d.sparse_keys[begin + j], 1000 * i + j);
      EXPECT_EQ(d.sparse_fields[begin + j], j);
      EXPECT_EQ(d.sparse_values[begin + j], static_cast<float>(-i));
    }
  }
}

TEST(ValidationSplitTest, SparseEntriesTravelWithTheirExamples) {
  Dataset train = NumberedSparse(500);
  StatusOr<Dataset> validation = SplitValidation(&train, 120, 7);
  ASSERT_TRUE(validation.ok()) << validation.status().ToString();
  EXPECT_EQ(validation->size, 120);
  EXPECT_EQ(train.size, 380);
  ExpectSparseRowsWhole(*validation);
  ExpectSparseRowsWhole(train);
  EXPECT_EQ(validation->sparse_keys.size() + train.sparse_keys.size(),
            NumberedSparse(500).sparse_keys.size());
  // The same examples are held out as without sparse fields.
  Dataset dense = Numbered(500);
  EXPECT_EQ(SplitValidation(&dense, 120, 7)->features, validation->features);
}

TEST(ValidationSplitTest, DenseSplitsGetNoSparseFields) {
  Dataset train = Numbered(100);
  StatusOr<Dataset> validation = SplitValidation(&train, 10, 7);
  ASSERT_TRUE(validation.ok());
  EXPECT_EQ(validation->num_fields, 0);
  EXPECT_TRUE(validation->sparse_offsets.empty());
  EXPECT_TRUE(train.sparse_offsets.empty());
}

TEST(ValidationSplitTest, RefusesASplitThatLeavesNoTraining) {
  Dataset d = Numbered(10);
  EXPECT_EQ(SplitValidation(&d, 10, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SplitValidation(&d, -1, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(d.size, 10);
}

TEST(StandardizeTest, FitsOnTrainingAndAppliesToOtherSplits) {
  Dataset train;
  train.size = 2;
  train.feature_dim = 2;
  train.features = {1, 5, 3, 5};  // feature 0: mean 2, sd 1; feature 1 constant
  const Standardization s = FitStandardization(train);
  Dataset test = train;
  test.features = {4, 7, 2, 5};
  Standardize(s, &train);
  Standardize(s, &test);
  EXPECT_EQ(train.features, (std::vector<float>{-1, 0, 1, 0}));
  EXPECT_EQ(test.features, (std::vector<float>{2, 2, 0, 0}));
}

TEST(StandardizeTest, LeavesSparseEntriesAlone) {
  Dataset train = NumberedSparse(30);
  const Dataset before = train;
  const Standardization s = FitStandardization(train);
  Standardize(s, &train);
  EXPECT_NE(train.features, before.features);
  EXPECT_EQ(train.sparse_offsets, before.sparse_offsets);
  EXPECT_EQ(train.sparse_keys, before.sparse_keys);
  EXPECT_EQ(train.sparse_fields, before.sparse_fields);
  EXPECT_EQ(train.sparse_values, before.sparse_values);
}

// libsvm: no dense features at all (this once looped forever).
TEST(StandardizeTest, SparseOnlyDatasetIsUnchanged) {
  Dataset train = NumberedSparse(10);
  train.feature_dim = 0;
  train.features.clear();
  const Dataset before = train;
  const Standardization s = FitStandardization(train);
  EXPECT_TRUE(s.mean.empty());
  Standardize(s, &train);
  EXPECT_TRUE(train.features.empty());
  EXPECT_EQ(train.sparse_values, before.sparse_values);
}

}  // namespace
}  // namespace pst
