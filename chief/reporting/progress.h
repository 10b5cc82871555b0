// Progress: where a run stands (global step of total, percent), how fast it
// goes and when it should end. The rates and the ETA come from the samples of
// a recent window, not the whole run: the start-up, evaluations and a
// recovery would otherwise skew them for the rest of the run. A wait at the
// start of the window (workers joining) is left out too.
//
// A plain calculator: the caller passes the time in, so tests use fake time.
// Not thread-safe.
#ifndef PST_CHIEF_REPORTING_PROGRESS_H_
#define PST_CHIEF_REPORTING_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "common/clock.h"

namespace pst {

struct ProgressSnapshot {
  int64_t step = 0;
  int64_t total_steps = 0;         // 0: no end (--follow until stopped): no percent, no ETA
  double percent = 0;              // of total_steps, from the global step
  double steps_per_sec = 0;        // over the window; 0 until two samples differ in time
  double examples_per_sec = 0;     // likewise
  double elapsed_secs = 0;         // since training opened
  std::optional<double> eta_secs;  // none while the step rate is 0
};

class Progress {
 public:
  // `window`: how far back the rates look.
  Progress(int64_t total_steps, MonotonicClock::TimePoint start, MonotonicClock::Duration window);

  // Where the run is at `now`: its global step and the examples trained so
  // far (a running total). A step lower than the last one (the cluster went
  // back to a checkpoint) starts the window over.
  void Observe(MonotonicClock::TimePoint now, int64_t step, int64_t examples);

  // As of the last Observe.
  ProgressSnapshot Snapshot() const;

 private:
  struct Sample {
    MonotonicClock::TimePoint time;
    int64_t step;
    int64_t examples;
  };

  const int64_t total_steps_;
  const MonotonicClock::TimePoint start_;
  const MonotonicClock::Duration window_;
  // Oldest first; the oldest may predate the window, so the rates span all of it.
  std::deque<Sample> samples_;
};

// "step 1500/3000 (50.0%), 301.2 steps/s, 30120 examples/s, loss 0.2345,
// test accuracy 0.9512, elapsed 4.9 s, ETA 5.0 s, lr 0.05": no accuracy part
// before the first evaluation, "ETA ?" while the rate is unknown, the
// learning rate only when given (a scheduled one).
std::string FormatProgress(const ProgressSnapshot& p, double loss,
                           std::optional<double> test_accuracy,
                           std::optional<double> learning_rate = std::nullopt);

// "4.9 s", "2m05s", "1h02m".
std::string FormatDuration(double seconds);

}  // namespace pst

#endif  // PST_CHIEF_REPORTING_PROGRESS_H_
