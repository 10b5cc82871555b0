// Dataset: a labelled set of examples held in memory, as the readers produce
// it and the input pipeline consumes it.
#ifndef PST_DATA_DATASET_H_
#define PST_DATA_DATASET_H_

#include <cstdint>
#include <vector>

#include "common/input_shape.h"

namespace pst {

struct Dataset {
  int64_t size = 0;         // N examples
  int64_t feature_dim = 0;  // D (784 for MNIST)
  // One example's shape, its size D: H x W x C for images (stored HWC), D
  // plain features otherwise. Every reader sets it.
  InputShape example_shape = 0;
  int num_classes = 0;          // labels lie in [0, num_classes)
  std::vector<float> features;  // N x D, row-major (MNIST pixels in [0,1])
  std::vector<int32_t> labels;  // N
  // Sparse features (criteo, libsvm), in compressed rows: example i's
  // entries are [sparse_offsets[i], sparse_offsets[i+1]), each a 64-bit key
  // (criteo: the hash of the field index and the value's string), the field
  // it belongs to and a weight. All empty when num_fields == 0 (dense data).
  int num_fields = 0;
  std::vector<int64_t> sparse_offsets;  // N + 1, from 0, non-decreasing
  std::vector<int64_t> sparse_keys;
  std::vector<int32_t> sparse_fields;  // in [0, num_fields)
  std::vector<float> sparse_values;
};

}  // namespace pst

#endif  // PST_DATA_DATASET_H_
