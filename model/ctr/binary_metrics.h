// Metrics of a binary classifier (click models): exact AUC and log-loss
// over a whole set.
#ifndef PST_MODEL_CTR_BINARY_METRICS_H_
#define PST_MODEL_CTR_BINARY_METRICS_H_

#include <cstdint>
#include <vector>

namespace pst {

struct BinaryMetrics {
  double auc = 0;       // NaN when the labels hold one class only
  double log_loss = 0;  // mean, with p clipped to [1e-7, 1 - 1e-7]
  double ctr = 0;       // share of positive labels
  int64_t count = 0;
};

// probabilities[i]: P(label 1) of example i; labels[i] in {0, 1}. AUC is
// exact: the Mann-Whitney statistic over ranks by probability, ties given
// their average rank (not tf.metrics.auc's 200-threshold approximation).
BinaryMetrics ComputeBinaryMetrics(const std::vector<float>& probabilities,
                                   const std::vector<int32_t>& labels);

}  // namespace pst

#endif  // PST_MODEL_CTR_BINARY_METRICS_H_
