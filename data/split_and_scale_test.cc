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

}  // namespace
}  // namespace pst
