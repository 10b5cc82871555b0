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
};

}  // namespace pst

#endif  // PST_COMMON_BATCH_H_
