#include "chief/reporting/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/clock.h"

namespace pst {

Progress::Progress(int64_t total_steps, MonotonicClock::TimePoint start,
                   MonotonicClock::Duration window)
    : total_steps_(total_steps), start_(start), window_(window) {}

void Progress::Observe(MonotonicClock::TimePoint now, int64_t step, int64_t examples) {
  if (!samples_.empty() && step < samples_.back().step) samples_.clear();
  samples_.push_back({now, step, examples});
  // Keep one sample at or before the window's start, so the rate covers the
  // whole window rather than a shrinking part of it.
  while (samples_.size() > 2 && samples_[1].time <= now - window_) samples_.pop_front();
  // A window that begins with the step standing still (workers still
  // joining, or coming back after a recovery) starts where the step moved:
  // the wait is over and would only inflate the ETA.
  while (samples_.size() > 1 && samples_[1].step == samples_.front().step) samples_.pop_front();
}

ProgressSnapshot Progress::Snapshot() const {
  ProgressSnapshot p;
  p.total_steps = total_steps_;
  if (samples_.empty()) return p;
  const Sample& first = samples_.front();
  const Sample& last = samples_.back();
  p.step = last.step;
  p.percent = total_steps_ > 0 ? 100.0 * std::min(last.step, total_steps_) / total_steps_ : 0;
  p.elapsed_secs = std::chrono::duration<double>(last.time - start_).count();
  const double span = std::chrono::duration<double>(last.time - first.time).count();
  if (span <= 0) return p;
  p.steps_per_sec = (last.step - first.step) / span;
  p.examples_per_sec = (last.examples - first.examples) / span;
  if (p.steps_per_sec > 0 && total_steps_ > 0) {
    p.eta_secs = std::max<int64_t>(0, total_steps_ - last.step) / p.steps_per_sec;
  }
  return p;
}

std::string FormatDuration(double seconds) {
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof(text), "%.1f s", seconds);
  } else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(text, sizeof(text), "%ldm%02lds", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(text, sizeof(text), "%ldh%02ldm", m / 60, m % 60);
  }
  return text;
}

std::string FormatProgress(const ProgressSnapshot& p, double loss,
                           std::optional<double> test_accuracy,
                           std::optional<double> learning_rate) {
  char text[256];
  std::string line;
  if (p.total_steps > 0) {
    std::snprintf(text, sizeof(text), "step %lld/%lld (%.1f%%)", static_cast<long long>(p.step),
                  static_cast<long long>(p.total_steps), p.percent);
  } else {
    std::snprintf(text, sizeof(text), "step %lld", static_cast<long long>(p.step));
  }
  line = text;
  std::snprintf(text, sizeof(text), ", %.1f steps/s, %.0f examples/s, loss %.4f", p.steps_per_sec,
                p.examples_per_sec, loss);
  line += text;
  if (test_accuracy) {
    std::snprintf(text, sizeof(text), ", test accuracy %.4f", *test_accuracy);
    line += text;
  }
  line += ", elapsed " + FormatDuration(p.elapsed_secs);
  if (p.total_steps > 0) {
    line += ", ETA " + (p.eta_secs ? FormatDuration(*p.eta_secs) : std::string("?"));
  }
  if (learning_rate) {
    std::snprintf(text, sizeof(text), ", lr %.6g", *learning_rate);
    line += text;
  }
  return line;
}

}  // namespace pst
