// StepPhases: where an async worker's training thread spends its steps
// under --overlap, summed over the steps and told per step at the end.
//
// A step (GradientStreamer::StartStep to Finish) is split into: waiting for
// the previous push's acknowledgement, sending the parts and the pulls
// behind them, waiting for the pulled values at the end, and the rest,
// which is the model's forward and backward passes (computing).
#ifndef PST_WORKER_STEP_PHASES_H_
#define PST_WORKER_STEP_PHASES_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/clock.h"

namespace pst {

class StepPhases {
 public:
  using Duration = MonotonicClock::Duration;
  enum Phase { kAcknowledgement, kSending, kPull, kNumPhases };

  // Starts a step: what was added since the last EndStep is dropped (a
  // step that was not pushed whole does not count).
  void StartStep() { current_ = {}; }
  void Add(Phase phase, Duration d) { current_[phase] += d; }
  // Counts the step, of `d` in all, with its phases.
  void EndStep(Duration d);
  // The steps counted since `earlier` (this object, at an earlier time).
  StepPhases Since(const StepPhases& earlier) const;
  int64_t steps() const { return steps_; }
  // Mean per step, in milliseconds.
  double Mean(Phase phase) const;
  double MeanComputing() const;
  double MeanStep() const;
  // "1,000 steps, per step 1.53 ms: computing 1.02 ms, waiting for the
  // acknowledgement 0.01 ms, sending 0.06 ms, waiting for the pull 0.44 ms".
  std::string Describe() const;

 private:
  std::array<Duration, kNumPhases> current_{};  // of the step in progress
  std::array<Duration, kNumPhases> phases_{};
  Duration steps_total_{};
  int64_t steps_ = 0;
};

}  // namespace pst

#endif  // PST_WORKER_STEP_PHASES_H_
