// ExpectSameDataset: two Datasets equal in every member (the readers' tests:
// lines in memory give what a file of them gives).
#ifndef PST_DATA_TESTING_SAME_DATASET_H_
#define PST_DATA_TESTING_SAME_DATASET_H_

#include <gtest/gtest.h>

#include "data/dataset.h"

namespace pst {

inline void ExpectSameDataset(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.feature_dim, b.feature_dim);
  EXPECT_EQ(a.example_shape, b.example_shape);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.num_fields, b.num_fields);
  EXPECT_EQ(a.sparse_offsets, b.sparse_offsets);
  EXPECT_EQ(a.sparse_keys, b.sparse_keys);
  EXPECT_EQ(a.sparse_fields, b.sparse_fields);
  EXPECT_EQ(a.sparse_values, b.sparse_values);
}

}  // namespace pst

#endif  // PST_DATA_TESTING_SAME_DATASET_H_
