// Dataset: a labelled set of examples held in memory, as the readers produce
// it and the input pipeline consumes it.
#ifndef PST_DATA_DATASET_H_
#define PST_DATA_DATASET_H_

#include <cstdint>
#include <vector>

namespace pst {

struct Dataset {
  int64_t size = 0;         // N examples
  int64_t feature_dim = 0;  // D (784 for MNIST)
  // One example's shape, its product D: {H, W, C} for images (stored HWC),
  // {D} for plain features. Empty: {D}.
  std::vector<int64_t> example_shape;
  int num_classes = 0;          // labels lie in [0, num_classes)
  std::vector<float> features;  // N x D, row-major (MNIST pixels in [0,1])
  std::vector<int32_t> labels;  // N
};

}  // namespace pst

#endif  // PST_DATA_DATASET_H_
