// The batches of bench_transport's training section: MNIST through the
// InputPipeline when $MNIST_DIR is set, otherwise synthetic random ones.
#ifndef PST_BENCH_TRANSPORT_TRAINING_BATCHES_H_
#define PST_BENCH_TRANSPORT_TRAINING_BATCHES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/batch.h"

namespace pst {

struct TrainingBatches {
  std::vector<Batch> batches;
  std::string source;  // where they came from, for the report
};

// `count` batches of `batch_size` examples; the synthetic ones have
// `input_dim` features in [0, 1) and labels below `num_classes`.
TrainingBatches MakeTrainingBatches(int64_t batch_size, int count, int64_t input_dim,
                                    int64_t num_classes);

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_TRAINING_BATCHES_H_
