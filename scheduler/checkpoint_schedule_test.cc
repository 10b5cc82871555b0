#include "scheduler/checkpoint_schedule.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

using std::chrono::seconds;
using TimePoint = CheckpointSchedule::TimePoint;

const TimePoint kStart{};

CheckpointScheduleOptions EverySteps(int64_t steps, int max_failures = 3) {
  CheckpointScheduleOptions o;
  o.every_steps = steps;
  o.every_secs = 0;
  o.max_failures = max_failures;
  return o;
}

TEST(CheckpointScheduleTest, DueOncePerIntervalOfSteps) {
  CheckpointSchedule schedule(EverySteps(100), 0, kStart);
  EXPECT_FALSE(schedule.Due(99, kStart));
  EXPECT_TRUE(schedule.Due(100, kStart));
  EXPECT_TRUE(schedule.Due(130, kStart));
  schedule.Saved(130, kStart);
  EXPECT_FALSE(schedule.Due(199, kStart));
  EXPECT_TRUE(schedule.Due(200, kStart));
  EXPECT_EQ(schedule.last_saved_step(), 130);
}

TEST(CheckpointScheduleTest, DueAfterTheIntervalOfSeconds) {
  CheckpointScheduleOptions o;
  o.every_secs = 60;
  CheckpointSchedule schedule(o, 0, kStart);
  EXPECT_FALSE(schedule.Due(1000, kStart + seconds(59)));
  EXPECT_TRUE(schedule.Due(1000, kStart + seconds(60)));
  schedule.Saved(1000, kStart + seconds(60));
  EXPECT_FALSE(schedule.Due(2000, kStart + seconds(119)));
}

TEST(CheckpointScheduleTest, AFailedSaveIsRetriedAtTheNextDueTimeNotAtOnce) {
  CheckpointSchedule schedule(EverySteps(100), 0, kStart);
  ASSERT_TRUE(schedule.Due(100, kStart));
  EXPECT_EQ(schedule.Failed(100, kStart), AfterSaveFailure::kRetryLater);
  EXPECT_FALSE(schedule.Due(101, kStart));
  EXPECT_FALSE(schedule.Due(199, kStart));
  EXPECT_TRUE(schedule.Due(200, kStart));
  EXPECT_EQ(schedule.last_saved_step(), 0);  // nothing newer on disk
}

TEST(CheckpointScheduleTest, GivesUpAfterMaxConsecutiveFailures) {
  CheckpointSchedule schedule(EverySteps(10, /*max_failures=*/3), 0, kStart);
  EXPECT_EQ(schedule.Failed(10, kStart), AfterSaveFailure::kRetryLater);
  EXPECT_EQ(schedule.Failed(20, kStart), AfterSaveFailure::kRetryLater);
  EXPECT_EQ(schedule.Failed(30, kStart), AfterSaveFailure::kGiveUp);
  EXPECT_EQ(schedule.consecutive_failures(), 3);
}

TEST(CheckpointScheduleTest, ASuccessResetsTheFailureCount) {
  CheckpointSchedule schedule(EverySteps(10, /*max_failures=*/2), 0, kStart);
  EXPECT_EQ(schedule.Failed(10, kStart), AfterSaveFailure::kRetryLater);
  schedule.Saved(20, kStart);
  EXPECT_EQ(schedule.consecutive_failures(), 0);
  EXPECT_EQ(schedule.Failed(30, kStart), AfterSaveFailure::kRetryLater);
  EXPECT_EQ(schedule.Failed(40, kStart), AfterSaveFailure::kGiveUp);
}

TEST(CheckpointScheduleTest, APostponedSaveWaitsForTheNextDueTimeAndCountsNoFailure) {
  CheckpointSchedule schedule(EverySteps(100), 0, kStart);
  schedule.Postponed(100, kStart);
  EXPECT_FALSE(schedule.Due(150, kStart));
  EXPECT_TRUE(schedule.Due(200, kStart));
  EXPECT_EQ(schedule.consecutive_failures(), 0);
  EXPECT_EQ(schedule.last_saved_step(), 0);
}

TEST(CheckpointScheduleTest, RestartMovesTheScheduleToTheRestoredStep) {
  CheckpointSchedule schedule(EverySteps(100), 0, kStart);
  schedule.Saved(300, kStart);
  schedule.Restart(300, kStart);  // rolled back to the checkpoint of 300
  EXPECT_FALSE(schedule.Due(350, kStart));
  EXPECT_TRUE(schedule.Due(400, kStart));
  EXPECT_EQ(schedule.last_saved_step(), 300);
}

}  // namespace
}  // namespace pst
