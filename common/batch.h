// Batch: a minibatch of examples as the models consume it.
#ifndef PST_COMMON_BATCH_H_
#define PST_COMMON_BATCH_H_

#include <cstdint>
#include <vector>

namespace pst {

struct Batch {
  int64_t size = 0;             // B
  int64_t feature_dim = 0;      // D (784 for MNIST)
  std::vector<float> features;  // B x D, row-major, MNIST pixels scaled to [0,1]
  std::vector<int32_t> labels;  // B, class ids in [0, num_classes)
  // Sparse (categorical) features of click and recommendation data, as in
  // Dataset: example i's entries are [sparse_offsets[i], sparse_offsets[i+1]).
  // All empty when the data has none (num_fields == 0).
  int num_fields = 0;
  std::vector<int64_t> sparse_offsets;  // B + 1
  std::vector<int64_t> sparse_keys;     // 64-bit feature keys (hashes: any bit pattern)
  std::vector<int32_t> sparse_fields;   // each entry's field, in [0, num_fields)
  std::vector<float> sparse_values;     // each entry's weight (1 for a categorical value)
};

}  // namespace pst

#endif  // PST_COMMON_BATCH_H_
