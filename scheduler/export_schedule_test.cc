#include "scheduler/export_schedule.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

using std::chrono::seconds;
using T = MonotonicClock::TimePoint;

TEST(ExportScheduleTest, ABaseFirstThenDeltasEveryIntervalThenABaseAgain) {
  ExportSchedule s(seconds(10), /*base_every=*/2);
  EXPECT_EQ(s.Due(T(seconds(0)), 0), ExportKind::kBase);
  s.Wrote(ExportKind::kBase, T(seconds(0)), 0);
  EXPECT_EQ(s.base_step(), 0);
  EXPECT_EQ(s.Due(T(seconds(9)), 50), ExportKind::kNone);  // too soon
  EXPECT_EQ(s.Due(T(seconds(10)), 50), ExportKind::kDelta);
  s.Wrote(ExportKind::kDelta, T(seconds(10)), 50);
  s.Wrote(ExportKind::kDelta, T(seconds(20)), 90);
  EXPECT_EQ(s.Due(T(seconds(30)), 120), ExportKind::kBase);  // after 2 deltas
  EXPECT_EQ(s.last_step(), 90);
}

TEST(ExportScheduleTest, NothingWhileTheStepStandsStill) {
  ExportSchedule s(seconds(1), 10);
  s.Wrote(ExportKind::kBase, T(seconds(0)), 40);
  EXPECT_EQ(s.Due(T(seconds(5)), 40), ExportKind::kNone);
  EXPECT_EQ(s.Due(T(seconds(5)), 40, /*final=*/true), ExportKind::kNone);
  EXPECT_EQ(s.Due(T(seconds(5)), 41), ExportKind::kDelta);
}

TEST(ExportScheduleTest, TheFinalExportDoesNotWaitForTheInterval) {
  ExportSchedule s(seconds(60), 10);
  s.Wrote(ExportKind::kBase, T(seconds(0)), 0);
  EXPECT_EQ(s.Due(T(seconds(1)), 7, /*final=*/true), ExportKind::kDelta);
}

TEST(ExportScheduleTest, ABrokenChainStartsOverWithABase) {
  ExportSchedule s(seconds(1), 10);
  s.Wrote(ExportKind::kBase, T(seconds(0)), 0);
  s.Wrote(ExportKind::kDelta, T(seconds(1)), 10);
  s.NeedBase();                                           // a rollback to step 5, say
  EXPECT_EQ(s.Due(T(seconds(1)), 5), ExportKind::kNone);  // the interval still holds
  EXPECT_EQ(s.Due(T(seconds(2)), 5), ExportKind::kBase);  // even at the step of before
  EXPECT_EQ(s.Due(T(seconds(1)), 5, /*final=*/true), ExportKind::kBase);
}

}  // namespace
}  // namespace pst
