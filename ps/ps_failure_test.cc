#include "ps/ps_failure.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(IsPsFailureTest, LostPsFailuresCallForARecovery) {
  EXPECT_TRUE(IsPsFailure(DeadlineExceeded("ps:0")));
  EXPECT_TRUE(IsPsFailure(Unavailable("ps:0 is down")));
  EXPECT_TRUE(IsPsFailure(FailedPrecondition("ps:0 is not initialized")));
}

TEST(IsPsFailureTest, OtherOutcomesAreNot) {
  EXPECT_FALSE(IsPsFailure(Status::OK()));
  EXPECT_FALSE(IsPsFailure(Aborted("training diverged")));
  EXPECT_FALSE(IsPsFailure(DataLoss("events file")));
  EXPECT_FALSE(IsPsFailure(InvalidArgument("bad tensor")));
}

}  // namespace
}  // namespace pst
