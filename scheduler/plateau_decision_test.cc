#include "scheduler/plateau_decision.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace pst {
namespace {

PlateauOptions Options(int patience, double min_delta = 0, int cooldown = 0) {
  PlateauOptions o;
  o.patience = patience;
  o.min_delta = min_delta;
  o.cooldown = cooldown;
  return o;
}

// Observe() of each loss in turn.
std::vector<bool> Feed(PlateauDecision& decision, const std::vector<double>& losses) {
  std::vector<bool> lower;
  for (double loss : losses) lower.push_back(decision.Observe(loss));
  return lower;
}

TEST(PlateauDecisionTest, LowersAfterPatienceEvaluationsWithoutImprovement) {
  PlateauDecision decision(Options(/*patience=*/3));
  EXPECT_EQ(Feed(decision, {1.0, 0.9, 0.95, 0.92, 0.91}),
            (std::vector<bool>{false, false, false, false, true}));
  EXPECT_EQ(decision.lowerings(), 1);
}

TEST(PlateauDecisionTest, AnImprovementResetsTheCount) {
  PlateauDecision decision(Options(/*patience=*/2));
  EXPECT_EQ(Feed(decision, {1.0, 1.1, 0.8, 0.9, 0.85}),
            (std::vector<bool>{false, false, false, false, true}));
}

TEST(PlateauDecisionTest, AnImprovementBelowMinDeltaIsNone) {
  PlateauDecision decision(Options(/*patience=*/2, /*min_delta=*/0.05));
  EXPECT_EQ(Feed(decision, {1.0, 0.97, 0.96}), (std::vector<bool>{false, false, true}));
  // 0.96 did not become the best: 0.94 is 0.06 below 1.0.
  EXPECT_EQ(Feed(decision, {0.94, 0.93, 0.92}), (std::vector<bool>{false, false, true}));
}

TEST(PlateauDecisionTest, AfterALoweringTheCooldownEvaluationsCountForNothing) {
  PlateauDecision decision(Options(/*patience=*/2, /*min_delta=*/0, /*cooldown=*/2));
  EXPECT_EQ(Feed(decision, {1.0, 1.0, 1.0}), (std::vector<bool>{false, false, true}));
  // Two evaluations of cooldown, then two more without improvement.
  EXPECT_EQ(Feed(decision, {1.0, 1.0, 1.0, 1.0}), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(decision.lowerings(), 2);
}

TEST(PlateauDecisionTest, WithoutCooldownTheCountStartsAgainAfterALowering) {
  PlateauDecision decision(Options(/*patience=*/2));
  EXPECT_EQ(Feed(decision, {1.0, 1.0, 1.0, 1.0, 1.0}),
            (std::vector<bool>{false, false, true, false, true}));
}

TEST(PlateauDecisionTest, ANaNLossIsNoImprovement) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  PlateauDecision decision(Options(/*patience=*/2));
  EXPECT_EQ(Feed(decision, {kNaN, kNaN}), (std::vector<bool>{false, true}));
  EXPECT_EQ(Feed(decision, {1.0, kNaN, kNaN}), (std::vector<bool>{false, false, true}));
}

TEST(PlateauDecisionTest, ARestoredDecisionGoesOnCountingLowerings) {
  PlateauDecision decision(Options(/*patience=*/1), /*lowerings=*/3);
  EXPECT_EQ(decision.lowerings(), 3);
  EXPECT_EQ(Feed(decision, {0.5, 0.5}), (std::vector<bool>{false, true}));
  EXPECT_EQ(decision.lowerings(), 4);
}

}  // namespace
}  // namespace pst
