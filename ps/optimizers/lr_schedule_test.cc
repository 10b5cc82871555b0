#include "ps/optimizers/lr_schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace pst {
namespace {

constexpr double kTol = 1e-7;

LrScheduleOptions Options(float lr, int64_t decay_steps, float decay_rate) {
  LrScheduleOptions o;
  o.learning_rate = lr;
  o.decay_steps = decay_steps;
  o.decay_rate = decay_rate;
  return o;
}

LrSchedule Make(std::string_view kind, const LrScheduleOptions& options) {
  StatusOr<LrSchedule> schedule = LrSchedule::Parse(kind, options);
  EXPECT_TRUE(schedule.ok()) << schedule.status().ToString();
  return std::move(schedule).value();
}

std::string ParseError(std::string_view kind, const LrScheduleOptions& options) {
  StatusOr<LrSchedule> schedule = LrSchedule::Parse(kind, options);
  EXPECT_FALSE(schedule.ok());
  if (schedule.ok()) return "";
  EXPECT_EQ(schedule.status().code(), Code::kInvalidArgument);
  return schedule.status().message();
}

TEST(LrScheduleTest, ConstantIgnoresTheStep) {
  const LrSchedule s = Make("constant", Options(0.1f, 0, 0.5f));
  EXPECT_EQ(s.kind(), LrDecay::kConstant);
  EXPECT_FLOAT_EQ(s.RateAt(0), 0.1f);
  EXPECT_FLOAT_EQ(s.RateAt(1000000), 0.1f);
}

TEST(LrScheduleTest, StepDropsByTheRateAtEachPeriod) {
  const LrSchedule s = Make("step", Options(0.1f, 100, 0.5f));
  EXPECT_NEAR(s.RateAt(99), 0.1, kTol);
  EXPECT_NEAR(s.RateAt(100), 0.05, kTol);
  EXPECT_NEAR(s.RateAt(250), 0.025, kTol);
}

TEST(LrScheduleTest, ExponentialDecaysContinuously) {
  const LrSchedule s = Make("exponential", Options(0.1f, 100, 0.5f));
  EXPECT_NEAR(s.RateAt(0), 0.1, kTol);
  EXPECT_NEAR(s.RateAt(50), 0.0707106781, kTol);  // 0.1 * 0.5^0.5
  EXPECT_NEAR(s.RateAt(200), 0.025, kTol);
}

TEST(LrScheduleTest, CosineGoesFromTheRateToTheFloorAndStays) {
  LrScheduleOptions o = Options(0.1f, 100, 0.5f);
  o.lr_min = 0.01f;
  const LrSchedule s = Make("cosine", o);
  EXPECT_NEAR(s.RateAt(0), 0.1, kTol);
  EXPECT_NEAR(s.RateAt(25), 0.0868198052, kTol);  // 0.01 + 0.045 * (1 + cos(pi/4))
  EXPECT_NEAR(s.RateAt(50), 0.055, kTol);
  EXPECT_NEAR(s.RateAt(100), 0.01, kTol);
  EXPECT_NEAR(s.RateAt(150), 0.01, kTol);
}

TEST(LrScheduleTest, PlateauLowersOncePerLoweringWhateverTheStep) {
  const LrSchedule s = Make("plateau", Options(0.1f, 0, 0.5f));
  EXPECT_NEAR(s.RateAt(500, 0), 0.1, kTol);
  EXPECT_NEAR(s.RateAt(500, 2), 0.025, kTol);
  EXPECT_NEAR(s.RateAt(9000, 2), 0.025, kTol);
}

TEST(LrScheduleTest, WarmUpRampsLinearlyToTheRate) {
  LrScheduleOptions o = Options(0.1f, 0, 0.5f);
  o.warmup_steps = 4;
  const LrSchedule s = Make("constant", o);
  EXPECT_NEAR(s.RateAt(0), 0.025, kTol);  // (0 + 1) / 4 of the rate
  EXPECT_NEAR(s.RateAt(1), 0.05, kTol);
  EXPECT_NEAR(s.RateAt(3), 0.1, kTol);
  EXPECT_NEAR(s.RateAt(4), 0.1, kTol);
}

TEST(LrScheduleTest, WarmUpScalesTheDecayedRateCountedFromStepZero) {
  LrScheduleOptions o = Options(0.1f, 2, 0.5f);
  o.warmup_steps = 4;
  const LrSchedule s = Make("step", o);
  EXPECT_NEAR(s.RateAt(2), 0.0375, kTol);  // 0.05 * 3/4
}

TEST(LrScheduleTest, TheFloorHoldsForEveryKind) {
  LrScheduleOptions o = Options(0.1f, 10, 0.1f);
  o.lr_min = 0.001f;
  EXPECT_NEAR(Make("step", o).RateAt(30), 0.001, kTol);  // 1e-4 unfloored
  EXPECT_NEAR(Make("exponential", o).RateAt(40), 0.001, kTol);
  o.decay_rate = 0.5f;
  EXPECT_NEAR(Make("plateau", o).RateAt(0, 10), 0.001, kTol);  // 0.1 / 1024 unfloored
}

TEST(LrScheduleTest, MultiplierIsTheRateOverTheBaseRate) {
  const LrSchedule s = Make("step", Options(0.2f, 100, 0.5f));
  EXPECT_FLOAT_EQ(s.Multiplier(0), 1.0f);
  EXPECT_FLOAT_EQ(s.Multiplier(100), 0.5f);
}

TEST(LrScheduleTest, TheSameStepGivesTheSameRateInAnotherProcessOrAfterARestore) {
  LrScheduleOptions o = Options(0.1f, 1000, 0.96f);
  o.warmup_steps = 500;
  o.lr_min = 1e-4f;
  for (std::string_view kind : {"step", "exponential", "cosine"}) {
    const LrSchedule first = Make(kind, o);
    const float before = first.RateAt(12345);
    for (int64_t step = 0; step < 20000; step += 997) first.RateAt(step);
    EXPECT_EQ(first.RateAt(12345), before) << kind;
    EXPECT_EQ(Make(kind, o).RateAt(12345), before) << kind;
  }
}

TEST(LrScheduleTest, AnUnknownKindNamesTheValidOnes) {
  EXPECT_EQ(ParseError("linear", Options(0.1f, 10, 0.5f)),
            "unknown learning-rate schedule 'linear' (valid: constant, step, exponential, "
            "cosine, plateau)");
}

TEST(LrScheduleTest, OutOfRangeFieldsAreNamed) {
  LrScheduleOptions o = Options(0.1f, 10, 0.5f);
  o.warmup_steps = -1;
  EXPECT_EQ(ParseError("constant", o), "LrScheduleOptions.warmup_steps must be >= 0, got -1");
  EXPECT_EQ(ParseError("step", Options(0.1f, -5, 0.5f)),
            "LrScheduleOptions.decay_steps must be > 0, got -5");
  EXPECT_EQ(ParseError("cosine", Options(0.1f, 0, 0.5f)),
            "LrScheduleOptions.decay_steps must be > 0, got 0");
  EXPECT_EQ(ParseError("exponential", Options(0.1f, 10, 0.0f)),
            "LrScheduleOptions.decay_rate must be finite and > 0, got 0");
  EXPECT_EQ(ParseError("plateau", Options(0.1f, 10, 1.0f)),
            "LrScheduleOptions.decay_rate must be in (0, 1) for plateau, got 1");
  EXPECT_EQ(ParseError("constant", Options(-0.1f, 10, 0.5f)),
            "LrScheduleOptions.learning_rate must be finite and > 0, got -0.1");
  o = Options(0.1f, 10, 0.5f);
  o.lr_min = 0.2f;
  EXPECT_EQ(ParseError("step", o),
            "LrScheduleOptions.lr_min must be in [0, learning_rate], got 0.2");
}

TEST(LrScheduleTest, OnlyTheFieldsTheKindReadsAreValidated) {
  EXPECT_TRUE(LrSchedule::Parse("constant", Options(0.1f, 0, 0.0f)).ok());
  EXPECT_TRUE(LrSchedule::Parse("plateau", Options(0.1f, -3, 0.5f)).ok());
}

}  // namespace
}  // namespace pst
