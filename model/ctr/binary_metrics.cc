#include "model/ctr/binary_metrics.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace pst {

BinaryMetrics ComputeBinaryMetrics(const std::vector<float>& probabilities,
                                   const std::vector<int32_t>& labels) {
  CHECK_EQ(probabilities.size(), labels.size());
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kClip = 1e-7;
  const size_t n = labels.size();
  BinaryMetrics m;
  m.count = static_cast<int64_t>(n);
  if (n == 0) {
    m.auc = m.log_loss = m.ctr = kNaN;
    return m;
  }
  int64_t positives = 0;
  double loss = 0;
  bool any_nan = false;
  for (size_t i = 0; i < n; ++i) {
    CHECK(labels[i] == 0 || labels[i] == 1) << "label " << labels[i] << " of example " << i;
    positives += labels[i];
    const double p = probabilities[i];
    if (std::isnan(p)) {
      any_nan = true;
      continue;
    }
    const double clipped = std::clamp(p, kClip, 1 - kClip);
    loss -= labels[i] == 1 ? std::log(clipped) : std::log1p(-clipped);
  }
  const int64_t negatives = static_cast<int64_t>(n) - positives;
  m.ctr = static_cast<double>(positives) / n;
  // A NaN probability (a diverged model) has no rank: say so rather than
  // sort it (NaN breaks the ordering std::sort needs).
  m.log_loss = any_nan ? kNaN : loss / n;
  if (any_nan || positives == 0 || negatives == 0) {
    m.auc = kNaN;
    return m;
  }
  // The Mann-Whitney statistic: the share of (positive, negative) pairs in
  // which the positive has the higher probability, a tie counting 1/2. Runs
  // of equal probabilities in ascending order: each positive of a run beats
  // the negatives of the runs below and ties with its run's negatives (the
  // same as ranks with ties at their average rank). Counts are exact in a
  // double up to 2^53.
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return probabilities[a] < probabilities[b]; });
  double wins = 0;  // twice the pairs won, ties once
  int64_t negatives_below = 0;
  for (size_t begin = 0; begin < n;) {
    const float value = probabilities[order[begin]];
    int64_t run_positives = 0, run_negatives = 0;
    size_t end = begin;
    for (; end < n && probabilities[order[end]] == value; ++end) {
      (labels[order[end]] == 1 ? run_positives : run_negatives) += 1;
    }
    wins += static_cast<double>(run_positives) * (2.0 * negatives_below + run_negatives);
    negatives_below += run_negatives;
    begin = end;
  }
  m.auc = wins / (2.0 * static_cast<double>(positives) * static_cast<double>(negatives));
  return m;
}

}  // namespace pst
