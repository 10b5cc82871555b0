#include "scheduler/worker_absence.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

using std::chrono::milliseconds;

class WorkerAbsenceTest : public ::testing::Test {
 protected:
  std::optional<std::string> At(int64_t ms, bool present) {
    return absence_.Observe(MonotonicClock::TimePoint(milliseconds(ms)), present, 40, 100);
  }
  WorkerAbsence absence_{milliseconds(1000)};
};

TEST_F(WorkerAbsenceTest, NoWorkerForLongerThanThePatienceStopsTheRun) {
  EXPECT_FALSE(At(0, false));
  EXPECT_FALSE(At(1000, false));  // exactly the patience is not yet too long
  const std::optional<std::string> why = At(1001, false);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("training is open at global step 40 of 100 but no worker has been alive "
                      "for 1000 ms (--join_timeout_ms)"),
            std::string::npos)
      << *why;
}

TEST_F(WorkerAbsenceTest, AWorkerThatComesBackStartsTheWaitOver) {
  EXPECT_FALSE(At(0, false));
  EXPECT_FALSE(At(900, true));
  EXPECT_FALSE(At(1500, false));
  EXPECT_FALSE(At(2500, false));
  EXPECT_TRUE(At(2501, false));
}

TEST_F(WorkerAbsenceTest, WorkersPresentNeverStopIt) {
  for (int64_t ms = 0; ms < 10000; ms += 500) EXPECT_FALSE(At(ms, true));
}

}  // namespace
}  // namespace pst
