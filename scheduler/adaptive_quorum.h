// AdaptiveQuorum: the chief's quorum N (the gradients a sync step
// aggregates) for --replicas_to_aggregate=auto.
//
// It times each sync step from the moment its tokens go out, and each
// worker's gradient from the token request that follows it (a worker asks
// for its next token once its push of step s is answered, saying it last
// received s). A step's arrivals are handed to a QuorumChooser once two
// later steps have opened: a worker that arrives within that horizon counts
// even when the step closed without it, so a worker that stops straggling
// is seen again; one later than that counts as never. Each step that opens
// gets the chooser's N, fixed for that step, unless the current N is
// expected to do within 5% as well: arrival times are noisy, and N should
// not flap between two near-equal choices.
//
// A plain object: the SyncCoordinator tells it what happened under its own
// lock and sends the N it returns with the tokens. Not thread-safe.
#ifndef PST_SCHEDULER_ADAPTIVE_QUORUM_H_
#define PST_SCHEDULER_ADAPTIVE_QUORUM_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "scheduler/quorum_chooser.h"

namespace pst {

class AdaptiveQuorum {
 public:
  using TimePoint = MonotonicClock::TimePoint;

  // N stays within [1, num_workers]; `window` steps of arrivals decide it.
  AdaptiveQuorum(int num_workers, int window);

  // Step `step` opens at `now`: returns its N.
  int StepOpened(int64_t step, TimePoint now);
  // The gradient `worker` computed for `step` was answered by `now`.
  void GradientArrived(int worker, int64_t step, TimePoint now);
  // A recovery moved the cluster to another step: the steps timed so far
  // will not finish, and are dropped unrecorded; the window stays.
  void Forget();

  // The N of the last step opened (num_workers before any).
  int quorum() const { return quorum_; }
  // Batches per second expected with `n` aggregated (0: no estimate).
  double ExpectedRate(int n) const { return chooser_.ProgressPerSecond(n); }

 private:
  struct OpenStep {
    TimePoint opened;
    std::vector<std::optional<double>> arrivals;  // seconds after `opened`
  };

  const int num_workers_;
  QuorumChooser chooser_;
  std::map<int64_t, OpenStep> steps_;  // opened, not yet handed to the chooser
  int quorum_;
};

}  // namespace pst

#endif  // PST_SCHEDULER_ADAPTIVE_QUORUM_H_
