#include "model/ctr/binary_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace pst {
namespace {

double Auc(const std::vector<float>& p, const std::vector<int32_t>& y) {
  return ComputeBinaryMetrics(p, y).auc;
}

// The definition: over all (positive, negative) pairs, 1 when the positive
// scores higher, 1/2 for a tie.
double PairCountAuc(const std::vector<float>& p, const std::vector<int32_t>& y) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    for (size_t j = 0; j < p.size(); ++j) {
      if (y[i] != 1 || y[j] != 0) continue;
      pairs += 1;
      wins += p[i] > p[j] ? 1.0 : p[i] == p[j] ? 0.5 : 0.0;
    }
  }
  return wins / pairs;
}

TEST(BinaryMetricsTest, AucOfHandWorkedCases) {
  EXPECT_DOUBLE_EQ(Auc({0.1f, 0.2f, 0.8f, 0.9f}, {0, 0, 1, 1}), 1.0);  // perfect
  EXPECT_DOUBLE_EQ(Auc({0.9f, 0.8f, 0.2f, 0.1f}, {0, 0, 1, 1}), 0.0);  // reversed
  EXPECT_DOUBLE_EQ(Auc({0.5f, 0.5f, 0.5f, 0.5f}, {0, 1, 0, 1}), 0.5);  // all tied
  // 4 pairs: (0.35 > 0.1), (0.35 < 0.4), (0.8 > 0.1), (0.8 > 0.4): 3/4.
  EXPECT_DOUBLE_EQ(Auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}), 0.75);
  // Positives 0.5, 0.8 against negatives 0.5, 0.2: 0.5 + 1 + 1 + 1 = 3.5 of 4.
  EXPECT_DOUBLE_EQ(Auc({0.5f, 0.5f, 0.2f, 0.8f}, {1, 0, 0, 1}), 0.875);
  // Ranks with ties at their average: 0.2 -> 1, the three 0.6 -> 3, 0.9 -> 5.
  // Positives at ranks 3 and 5: (8 - 2 * 3 / 2) / (2 * 3) = 5/6.
  EXPECT_DOUBLE_EQ(Auc({0.6f, 0.2f, 0.6f, 0.9f, 0.6f}, {1, 0, 0, 1, 0}), 5.0 / 6.0);
  // Order of the examples does not matter.
  EXPECT_DOUBLE_EQ(Auc({0.9f, 0.6f, 0.6f, 0.2f, 0.6f}, {1, 0, 1, 0, 0}), 5.0 / 6.0);
}

TEST(BinaryMetricsTest, AucMatchesPairCountOnRandomDataWithTies) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 50 + 37 * trial;
    // Few distinct values in some trials, so that ties are common.
    const int levels = trial % 2 == 0 ? 7 : 100000;
    std::vector<float> p(n);
    std::vector<int32_t> y(n);
    for (int i = 0; i < n; ++i) {
      y[i] = std::bernoulli_distribution(0.3)(rng) ? 1 : 0;
      // Positives score a little higher on average.
      const int level = static_cast<int>(rng() % levels);
      p[i] = std::min(1.0f, static_cast<float>(level) / levels + 0.1f * y[i]);
    }
    if (std::count(y.begin(), y.end(), 1) == 0) y[0] = 1;
    if (std::count(y.begin(), y.end(), 0) == 0) y[0] = 0;
    EXPECT_NEAR(Auc(p, y), PairCountAuc(p, y), 1e-12) << "trial " << trial;
  }
}

TEST(BinaryMetricsTest, LogLossCtrAndCount) {
  const BinaryMetrics m = ComputeBinaryMetrics({0.5f, 0.5f, 0.8f, 0.1f}, {1, 0, 1, 0});
  EXPECT_EQ(m.count, 4);
  EXPECT_DOUBLE_EQ(m.ctr, 0.5);
  const double expected =
      -(std::log(0.5) + std::log(0.5) + std::log(double{0.8f}) + std::log(1 - double{0.1f})) / 4;
  EXPECT_NEAR(m.log_loss, expected, 1e-12);
  EXPECT_DOUBLE_EQ(m.auc, (0.5 + 1 + 1 + 1) / 4);
}

TEST(BinaryMetricsTest, LogLossClipsCertainMistakes) {
  // p = 0 for a positive and p = 1 for a negative: -log(1e-7) each, not inf.
  const double clipped = -std::log(1e-7);
  EXPECT_NEAR(ComputeBinaryMetrics({0.0f}, {1}).log_loss, clipped, 1e-6);
  EXPECT_NEAR(ComputeBinaryMetrics({1.0f}, {0}).log_loss, clipped, 1e-6);
  // Right and certain: -log(1 - 1e-7), about 1e-7, not 0.
  const BinaryMetrics right = ComputeBinaryMetrics({1.0f, 0.0f}, {1, 0});
  EXPECT_NEAR(right.log_loss, -std::log1p(-1e-7), 1e-12);
  EXPECT_GT(right.log_loss, 0);
  EXPECT_DOUBLE_EQ(right.auc, 1.0);
}

TEST(BinaryMetricsTest, OneClassOrNoExamplesGiveNanAuc) {
  const BinaryMetrics ones = ComputeBinaryMetrics({0.2f, 0.9f}, {1, 1});
  EXPECT_TRUE(std::isnan(ones.auc));
  EXPECT_DOUBLE_EQ(ones.ctr, 1.0);
  EXPECT_NEAR(ones.log_loss, -(std::log(double{0.2f}) + std::log(double{0.9f})) / 2, 1e-12);
  EXPECT_TRUE(std::isnan(ComputeBinaryMetrics({0.2f, 0.9f}, {0, 0}).auc));
  const BinaryMetrics none = ComputeBinaryMetrics({}, {});
  EXPECT_EQ(none.count, 0);
  EXPECT_TRUE(std::isnan(none.auc));
  EXPECT_TRUE(std::isnan(none.log_loss));
  EXPECT_TRUE(std::isnan(none.ctr));
}

TEST(BinaryMetricsTest, NanProbabilityGivesNanAucAndLogLoss) {
  const BinaryMetrics m = ComputeBinaryMetrics({0.2f, std::nanf(""), 0.7f}, {0, 1, 1});
  EXPECT_TRUE(std::isnan(m.auc));
  EXPECT_TRUE(std::isnan(m.log_loss));
  EXPECT_NEAR(m.ctr, 2.0 / 3, 1e-12);
}

}  // namespace
}  // namespace pst
