#include "scheduler/quorum_chooser.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {

QuorumChooser::QuorumChooser(int num_workers, int min_quorum, int window)
    : num_workers_(num_workers), min_quorum_(min_quorum), window_(window) {
  CHECK_GE(num_workers_, 1);
  CHECK(min_quorum_ >= 1 && min_quorum_ <= num_workers_) << min_quorum_;
  CHECK_GE(window, 1);
}

void QuorumChooser::RecordStep(const std::vector<std::optional<double>>& arrivals) {
  std::vector<double> sorted;
  for (const std::optional<double>& t : arrivals) {
    if (t) sorted.push_back(*t);
  }
  std::sort(sorted.begin(), sorted.end());
  steps_.push_back(std::move(sorted));
  if (steps_.size() > window_) steps_.pop_front();
}

double QuorumChooser::ProgressPerSecond(int n) const {
  // A step that never had n arrivals would have waited for ever: n is
  // judged only if every step of the window reached it.
  double total = 0;
  for (const std::vector<double>& step : steps_) {
    if (static_cast<int>(step.size()) < n) return 0;
    total += step[n - 1];
  }
  if (steps_.empty() || total <= 0) return 0;
  return n / (total / steps_.size());
}

int QuorumChooser::Choose() const {
  if (steps_.empty()) return num_workers_;
  int best = min_quorum_;
  double best_rate = 0;
  for (int n = min_quorum_; n <= num_workers_; ++n) {
    const double rate = ProgressPerSecond(n);
    if (rate > 0 && rate >= best_rate * 0.99) {
      best = n;
      best_rate = std::max(rate, best_rate);
    }
  }
  return best;
}

}  // namespace pst
