#include "scheduler/best_model_keeper.h"

#include <gtest/gtest.h>

#include <limits>

namespace pst {
namespace {

BestModelOptions Options(const std::string& metric, bool higher_is_better, int patience) {
  BestModelOptions o;
  o.metric = metric;
  o.higher_is_better = higher_is_better;
  o.patience = patience;
  return o;
}

TEST(BestModelKeeperTest, AHigherAccuracyIsANewBestAnEqualOneIsNot) {
  BestModelKeeper keeper(Options("accuracy", true, 0));
  EXPECT_FALSE(keeper.best_step().has_value());
  EXPECT_TRUE(keeper.Observe(100, 0.5).new_best);
  EXPECT_TRUE(keeper.Observe(200, 0.6).new_best);
  EXPECT_FALSE(keeper.Observe(300, 0.6).new_best);
  EXPECT_FALSE(keeper.Observe(400, 0.55).new_best);
  EXPECT_EQ(keeper.best_step(), 200);
  EXPECT_EQ(keeper.best_score(), 0.6);
}

TEST(BestModelKeeperTest, ALowerLossIsANewBest) {
  BestModelKeeper keeper(Options("loss", false, 0));
  EXPECT_TRUE(keeper.Observe(100, 2.3).new_best);
  EXPECT_FALSE(keeper.Observe(200, 2.4).new_best);
  EXPECT_TRUE(keeper.Observe(300, 0.7).new_best);
  EXPECT_EQ(keeper.best_step(), 300);
}

TEST(BestModelKeeperTest, StopsAfterPatienceEvaluationsWithoutANewBest) {
  BestModelKeeper keeper(Options("accuracy", true, 3));
  EXPECT_TRUE(keeper.Observe(1000, 0.90).new_best);
  EXPECT_TRUE(keeper.Observe(2000, 0.95).new_best);
  EXPECT_FALSE(keeper.Observe(3000, 0.94).stop);
  EXPECT_FALSE(keeper.Observe(4000, 0.95).stop);
  const EvaluationVerdict last = keeper.Observe(5000, 0.93);
  EXPECT_TRUE(last.stop);
  EXPECT_FALSE(last.new_best);
  EXPECT_EQ(last.stop_message,
            "early stopping at step 5000: no improvement in 3 evaluations since step 2000 "
            "(best accuracy 0.95)");
}

TEST(BestModelKeeperTest, ANewBestResetsThePatience) {
  BestModelKeeper keeper(Options("loss", false, 2));
  keeper.Observe(100, 1.0);
  EXPECT_FALSE(keeper.Observe(200, 1.1).stop);
  EXPECT_TRUE(keeper.Observe(300, 0.9).new_best);
  EXPECT_FALSE(keeper.Observe(400, 1.1).stop);
  EXPECT_TRUE(keeper.Observe(500, 1.1).stop);
}

TEST(BestModelKeeperTest, PatienceZeroNeverStops) {
  BestModelKeeper keeper(Options("accuracy", true, 0));
  keeper.Observe(0, 0.9);
  for (int64_t step = 1; step <= 100; ++step) EXPECT_FALSE(keeper.Observe(step, 0.1).stop);
}

TEST(BestModelKeeperTest, ANaNScoreIsNeverABestAndCountsAsNoImprovement) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  BestModelKeeper keeper(Options("loss", false, 2));
  EXPECT_FALSE(keeper.Observe(100, kNaN).new_best);
  const EvaluationVerdict second = keeper.Observe(200, kNaN);
  EXPECT_TRUE(second.stop);
  EXPECT_EQ(second.stop_message, "early stopping at step 200: no improvement in 2 evaluations");
  EXPECT_FALSE(keeper.best_step().has_value());
}

TEST(BestModelKeeperTest, ARestoredKeeperComparesWithTheRestoredBest) {
  BestModelKeeper keeper(Options("accuracy", true, 2));
  keeper.Restore(3000, 0.97);
  EXPECT_FALSE(keeper.Observe(4000, 0.96).new_best);
  EXPECT_TRUE(keeper.Observe(5000, 0.98).new_best);
  EXPECT_EQ(keeper.best_step(), 5000);
}

}  // namespace
}  // namespace pst
