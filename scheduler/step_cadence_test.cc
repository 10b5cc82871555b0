#include "scheduler/step_cadence.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pst {
namespace {

// What the timeline does when it reads each of `steps` in turn: "L<step>"
// for a Step line, "E<step>" for an evaluation.
std::string Follow(StepCadence& cadence, const std::vector<int64_t>& steps) {
  std::string done;
  for (int64_t step : steps) {
    cadence.Observe(step);
    if (cadence.LogDue(step)) {
      done += " L" + std::to_string(step);
      cadence.Logged(step);
    }
    if (cadence.EvalDue(step)) {
      done += " E" + std::to_string(step);
      cadence.Evaluated(step);
    }
  }
  return done;
}

TEST(StepCadenceTest, OncePerIntervalFromStepZero) {
  StepCadence cadence(50, 100, 1000, 0);
  EXPECT_EQ(Follow(cadence, {0, 49, 50, 51, 99, 100, 149, 150}), " L50 L100 E100 L150");
}

TEST(StepCadenceTest, ARestoredRunCountsFromItsStep) {
  StepCadence cadence(50, 200, 3000, 1210);
  EXPECT_EQ(Follow(cadence, {1210, 1259, 1260, 1409, 1410}), " L1260 L1409 L1410 E1410");
}

TEST(StepCadenceTest, StepsSkippedBetweenTwoLooksGetNoLineOfTheirOwn) {
  StepCadence cadence(50, 100, 1000, 0);
  EXPECT_EQ(Follow(cadence, {230, 249, 250, 299, 300}), " L230 E230 L250 L300 E300");
}

// The step passed three multiples of 100 (and seven of 50) before the look
// at 350: one line and one evaluation, at 350; the next when a look finds
// the step past the next multiple (400).
TEST(StepCadenceTest, AJumpPastSeveralMultiplesIsOneEvaluationAtTheStepSeen) {
  StepCadence cadence(50, 100, 1000, 0);
  EXPECT_EQ(Follow(cadence, {0, 350, 360, 399, 420, 999}), " L350 E350 L420 E420 L999 E999");
}

TEST(StepCadenceTest, NothingAtOrPastTheLastStep) {
  // The final line and evaluation come after the workers' last reports.
  StepCadence cadence(50, 100, 1000, 0);
  EXPECT_EQ(Follow(cadence, {899, 999, 1000, 1010}), " L899 E899 L999 E999");
}

TEST(StepCadenceTest, NoEvaluationWithoutAnInterval) {
  StepCadence cadence(50, 0, 1000, 0);
  EXPECT_EQ(Follow(cadence, {0, 100, 500}), " L100 L500");
}

TEST(StepCadenceTest, ARollbackStartsBothOverFromTheStepRestored) {
  // A recovery restored the checkpoint of step 300: 350 and 400 are trained
  // again, and reported and evaluated again.
  StepCadence cadence(50, 100, 1000, 0);
  EXPECT_EQ(Follow(cadence, {420, 300, 349, 350, 399, 400}), " L420 E420 L350 L400 E400");
}

TEST(StepCadenceTest, TheSameStepAgainIsNoRollback) {
  StepCadence cadence(50, 100, 1000, 0);
  EXPECT_EQ(Follow(cadence, {60, 60, 70, 100}), " L60 L100 E100");
}

}  // namespace
}  // namespace pst
