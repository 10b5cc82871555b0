#include "worker/step_phases.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

using std::chrono::microseconds;

TEST(StepPhasesTest, ComputingIsTheStepLessItsOtherPhases) {
  StepPhases phases;
  EXPECT_EQ(phases.MeanStep(), 0);
  for (int step = 0; step < 4; ++step) {
    phases.StartStep();
    phases.Add(StepPhases::kAcknowledgement, microseconds(100));
    phases.Add(StepPhases::kSending, microseconds(50));
    phases.Add(StepPhases::kSending, microseconds(50));
    phases.Add(StepPhases::kPull, microseconds(300));
    phases.EndStep(microseconds(1500));
  }
  // A step that ends otherwise (not pushed whole) does not count.
  phases.StartStep();
  phases.Add(StepPhases::kAcknowledgement, microseconds(900));
  phases.StartStep();
  EXPECT_EQ(phases.steps(), 4);
  EXPECT_DOUBLE_EQ(phases.MeanStep(), 1.5);
  EXPECT_DOUBLE_EQ(phases.Mean(StepPhases::kSending), 0.1);
  EXPECT_DOUBLE_EQ(phases.MeanComputing(), 1.0);
  EXPECT_EQ(phases.Describe(),
            "4 steps, per step 1.500 ms: computing 1.000 ms, waiting for the acknowledgement "
            "0.100 ms, sending 0.100 ms, waiting for the pull 0.300 ms");
  // The steps since an earlier copy.
  const StepPhases first_four = phases;
  phases.StartStep();
  phases.Add(StepPhases::kPull, microseconds(700));
  phases.EndStep(microseconds(1000));
  const StepPhases fifth = phases.Since(first_four);
  EXPECT_EQ(fifth.steps(), 1);
  EXPECT_DOUBLE_EQ(fifth.Mean(StepPhases::kPull), 0.7);
  EXPECT_DOUBLE_EQ(fifth.MeanComputing(), 0.3);
}

}  // namespace
}  // namespace pst
