#include "chief/reporting/progress.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace pst {
namespace {

using std::chrono::seconds;

const MonotonicClock::TimePoint kStart{};  // fake time: seconds after kStart

TEST(ProgressTest, NothingObservedYet) {
  Progress progress(3000, kStart, seconds(20));
  const ProgressSnapshot p = progress.Snapshot();
  EXPECT_EQ(p.step, 0);
  EXPECT_EQ(p.total_steps, 3000);
  EXPECT_EQ(p.steps_per_sec, 0);
  EXPECT_FALSE(p.eta_secs.has_value());
}

TEST(ProgressTest, PercentAndElapsedFromTheGlobalStep) {
  // A run restored at step 1000: percent counts from 0, elapsed from `start`.
  Progress progress(3000, kStart, seconds(20));
  progress.Observe(kStart + seconds(2), 1500, 0);
  const ProgressSnapshot p = progress.Snapshot();
  EXPECT_EQ(p.step, 1500);
  EXPECT_DOUBLE_EQ(p.percent, 50.0);
  EXPECT_DOUBLE_EQ(p.elapsed_secs, 2.0);
  EXPECT_FALSE(p.eta_secs.has_value()) << "one sample gives no rate";
}

TEST(ProgressTest, RatesAndEtaFromTheRecentWindowOnly) {
  Progress progress(10000, kStart, seconds(10));
  // 100 steps/s for 20 s, then 300 steps/s for 5 s.
  int64_t step = 0, examples = 0;
  for (int t = 1; t <= 25; ++t) {
    const int64_t steps = t <= 20 ? 100 : 300;
    progress.Observe(kStart + seconds(t), step += steps, examples += 100 * steps);
  }
  const ProgressSnapshot p = progress.Snapshot();
  ASSERT_EQ(p.step, 3500);
  // The last 10 s: 5 at 100 and 5 at 300 steps/s, not the whole run's 140.
  EXPECT_DOUBLE_EQ(p.steps_per_sec, 200.0);
  EXPECT_DOUBLE_EQ(p.examples_per_sec, 20000.0);
  ASSERT_TRUE(p.eta_secs.has_value());
  EXPECT_DOUBLE_EQ(*p.eta_secs, (10000 - 3500) / 200.0);
}

TEST(ProgressTest, EtaIsRemainingStepsOverTheRate) {
  Progress progress(3000, kStart, seconds(20));
  progress.Observe(kStart + seconds(1), 0, 0);
  progress.Observe(kStart + seconds(6), 1500, 150000);
  const ProgressSnapshot p = progress.Snapshot();
  EXPECT_DOUBLE_EQ(p.steps_per_sec, 300.0);
  ASSERT_TRUE(p.eta_secs.has_value());
  EXPECT_DOUBLE_EQ(*p.eta_secs, 5.0);
}

TEST(ProgressTest, AWaitBeforeTheFirstStepIsLeftOut) {
  Progress progress(3000, kStart, seconds(20));
  for (int t = 0; t <= 3; ++t) progress.Observe(kStart + seconds(t), 0, 0);  // workers joining
  EXPECT_FALSE(progress.Snapshot().eta_secs.has_value());
  progress.Observe(kStart + seconds(4), 300, 0);
  progress.Observe(kStart + seconds(5), 600, 0);
  const ProgressSnapshot p = progress.Snapshot();
  EXPECT_DOUBLE_EQ(p.steps_per_sec, 300.0) << "not 600 steps over 5 s";
  EXPECT_DOUBLE_EQ(p.elapsed_secs, 5.0);
}

TEST(ProgressTest, NoEtaWhileStalledAndZeroPastTheEnd) {
  Progress progress(100, kStart, seconds(20));
  progress.Observe(kStart + seconds(1), 40, 0);
  progress.Observe(kStart + seconds(2), 40, 0);
  EXPECT_FALSE(progress.Snapshot().eta_secs.has_value());
  progress.Observe(kStart + seconds(3), 103, 0);  // async runs overshoot a little
  const ProgressSnapshot p = progress.Snapshot();
  EXPECT_DOUBLE_EQ(p.percent, 100.0);
  ASSERT_TRUE(p.eta_secs.has_value());
  EXPECT_EQ(*p.eta_secs, 0.0);
}

TEST(ProgressTest, AStepBackStartsTheWindowOver) {
  Progress progress(3000, kStart, seconds(20));
  progress.Observe(kStart + seconds(1), 0, 0);
  progress.Observe(kStart + seconds(11), 1000, 0);
  // Recovered from a checkpoint at 500: the old samples would give a negative rate.
  progress.Observe(kStart + seconds(12), 500, 0);
  EXPECT_FALSE(progress.Snapshot().eta_secs.has_value());
  progress.Observe(kStart + seconds(14), 700, 0);
  EXPECT_DOUBLE_EQ(progress.Snapshot().steps_per_sec, 100.0);
}

TEST(ProgressFormatTest, Durations) {
  EXPECT_EQ(FormatDuration(4.94), "4.9 s");
  EXPECT_EQ(FormatDuration(125), "2m05s");
  EXPECT_EQ(FormatDuration(3600 + 2 * 60 + 10), "1h02m");
}

TEST(ProgressFormatTest, LineWithAndWithoutAccuracy) {
  ProgressSnapshot p;
  p.step = 1500;
  p.total_steps = 3000;
  p.percent = 50;
  p.steps_per_sec = 301.25;
  p.examples_per_sec = 30125;
  p.elapsed_secs = 4.9;
  p.eta_secs = 5.0;
  EXPECT_EQ(FormatProgress(p, 0.23456, 0.9512),
            "step 1500/3000 (50.0%), 301.2 steps/s, 30125 examples/s, loss 0.2346, "
            "test accuracy 0.9512, elapsed 4.9 s, ETA 5.0 s");
  p.eta_secs.reset();
  EXPECT_EQ(FormatProgress(p, 0.5, std::nullopt),
            "step 1500/3000 (50.0%), 301.2 steps/s, 30125 examples/s, loss 0.5000, "
            "elapsed 4.9 s, ETA ?");
  // A scheduled learning rate comes last, so that the fields before keep their places.
  EXPECT_EQ(FormatProgress(p, 0.5, std::nullopt, 0.0125),
            "step 1500/3000 (50.0%), 301.2 steps/s, 30125 examples/s, loss 0.5000, "
            "elapsed 4.9 s, ETA ?, lr 0.0125");
}

TEST(ProgressFormatTest, ARunWithoutAnEndShowsNeitherPercentNorEta) {
  Progress progress(/*total_steps=*/0, MonotonicClock::TimePoint(), std::chrono::seconds(10));
  progress.Observe(MonotonicClock::TimePoint(std::chrono::seconds(1)), 100, 1000);
  progress.Observe(MonotonicClock::TimePoint(std::chrono::seconds(2)), 300, 3000);
  const ProgressSnapshot p = progress.Snapshot();
  EXPECT_FALSE(p.eta_secs.has_value());
  EXPECT_EQ(FormatProgress(p, 0.5, std::nullopt),
            "step 300, 200.0 steps/s, 2000 examples/s, loss 0.5000, elapsed 2.0 s");
}

}  // namespace
}  // namespace pst
