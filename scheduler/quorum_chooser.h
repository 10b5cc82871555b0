// QuorumChooser: --replicas_to_aggregate=auto. From the times at which each
// worker's gradient arrived in recent sync steps, picks the quorum N (the
// gradients a step aggregates; docs/DESIGN.md's glossary) that maximizes expected progress per
// second, as in Chen et al. 2016 ("Revisiting Distributed Synchronous SGD"): a step that waits for
// the N fastest of n workers lasts the N-th smallest arrival time and advances training by about N
// workers' batches, so the chooser maximizes N / E[T(N:n)], with E[T(N:n)] the mean N-th arrival
// over the window. A worker whose gradient did not arrive in a step (dead, or later than the step)
// counts as arriving never: no N above the arrivals of that step is estimated from it.
//
// A plain object: the chief records and asks; it changes nothing by itself.
// Not thread-safe.
#ifndef PST_SCHEDULER_QUORUM_CHOOSER_H_
#define PST_SCHEDULER_QUORUM_CHOOSER_H_

#include <deque>
#include <optional>
#include <vector>

namespace pst {

class QuorumChooser {
 public:
  // `num_workers` >= 1; N stays within [min_quorum, num_workers];
  // `window` steps of arrivals are kept.
  QuorumChooser(int num_workers, int min_quorum, int window);

  // One step: arrivals[w] is when worker w's gradient arrived, in seconds
  // since the step opened, or nullopt when it did not arrive.
  void RecordStep(const std::vector<std::optional<double>>& arrivals);

  // The N to use: the one with the most workers' batches per second over
  // the window (the larger N on a tie within 1%, since more gradients
  // means less noise); num_workers until a step is recorded, min_quorum
  // when no N had enough arrivals in every step of the window.
  int Choose() const;

  // Expected batches per second with N aggregated (0 when no step of the
  // window had N arrivals).
  double ProgressPerSecond(int n) const;

 private:
  const int num_workers_, min_quorum_;
  const size_t window_;
  std::deque<std::vector<double>> steps_;  // each step's arrival times, sorted
};

}  // namespace pst

#endif  // PST_SCHEDULER_QUORUM_CHOOSER_H_
