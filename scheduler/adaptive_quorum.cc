#include "scheduler/adaptive_quorum.h"

namespace pst {
namespace {

// Steps that may still hear from a worker after they close: a step's
// arrivals go to the chooser when the second step after it opens.
constexpr int64_t kHorizonSteps = 2;
// How much better another N must be expected to do before N changes.
constexpr double kMinGain = 1.05;

}  // namespace

AdaptiveQuorum::AdaptiveQuorum(int num_workers, int window)
    : num_workers_(num_workers),
      chooser_(num_workers, /*min_quorum=*/1, window),
      quorum_(num_workers) {}

int AdaptiveQuorum::StepOpened(int64_t step, TimePoint now) {
  while (!steps_.empty() && steps_.begin()->first <= step - kHorizonSteps) {
    chooser_.RecordStep(steps_.begin()->second.arrivals);
    steps_.erase(steps_.begin());
  }
  steps_[step] = OpenStep{now, std::vector<std::optional<double>>(num_workers_)};
  const int best = chooser_.Choose();
  const double current = chooser_.ProgressPerSecond(quorum_);
  if (current == 0 || chooser_.ProgressPerSecond(best) > kMinGain * current) quorum_ = best;
  return quorum_;
}

void AdaptiveQuorum::GradientArrived(int worker, int64_t step, TimePoint now) {
  auto it = steps_.find(step);
  if (it == steps_.end() || worker < 0 || worker >= num_workers_) return;
  std::optional<double>& arrival = it->second.arrivals[worker];
  // A worker repeats its token request while it waits: the first one counts.
  if (!arrival) arrival = std::chrono::duration<double>(now - it->second.opened).count();
}

void AdaptiveQuorum::Forget() { steps_.clear(); }

}  // namespace pst
