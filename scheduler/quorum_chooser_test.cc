#include "scheduler/quorum_chooser.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

namespace pst {
namespace {

using Arrivals = std::vector<std::optional<double>>;

// `steps` steps of n workers arriving at `base` seconds each, plus up to
// 10% noise, worker `slow` (if any) taking `factor` times as long.
void Record(QuorumChooser& chooser, int steps, int n, double base, int slow, double factor,
            std::mt19937& rng) {
  std::uniform_real_distribution<double> noise(0.0, 0.1 * base);
  for (int s = 0; s < steps; ++s) {
    Arrivals arrivals(n);
    for (int w = 0; w < n; ++w) arrivals[w] = (w == slow ? factor : 1.0) * base + noise(rng);
    chooser.RecordStep(arrivals);
  }
}

TEST(QuorumChooserTest, AllWorkersWhenTheyArriveTogether) {
  std::mt19937 rng(1);
  QuorumChooser chooser(4, 1, 20);
  EXPECT_EQ(chooser.Choose(), 4);  // nothing recorded yet
  Record(chooser, 20, 4, 0.1, -1, 1.0, rng);
  EXPECT_EQ(chooser.Choose(), 4);
}

TEST(QuorumChooserTest, LeavesOutAPersistentStraggler) {
  std::mt19937 rng(2);
  QuorumChooser chooser(4, 1, 20);
  Record(chooser, 20, 4, 0.1, 2, 3.0, rng);
  // N=3: 3 batches per ~0.11 s; N=4: 4 per ~0.31 s.
  EXPECT_EQ(chooser.Choose(), 3);
  EXPECT_GT(chooser.ProgressPerSecond(3), 2 * chooser.ProgressPerSecond(4));
}

TEST(QuorumChooserTest, WaitsForASlightlySlowerWorker) {
  // 20% slower: 4 / 1.2 > 3 / 1.0, so waiting for it pays.
  std::mt19937 rng(3);
  QuorumChooser chooser(4, 1, 20);
  Record(chooser, 20, 4, 0.1, 0, 1.2, rng);
  EXPECT_EQ(chooser.Choose(), 4);
}

TEST(QuorumChooserTest, FollowsAStragglerThatAppearsMidRunWithinAWindow) {
  std::mt19937 rng(4);
  QuorumChooser chooser(4, 1, 10);
  Record(chooser, 30, 4, 0.1, -1, 1.0, rng);
  EXPECT_EQ(chooser.Choose(), 4);
  Record(chooser, 10, 4, 0.1, 1, 4.0, rng);  // one window of a slow worker 1
  EXPECT_EQ(chooser.Choose(), 3);
  Record(chooser, 10, 4, 0.1, -1, 1.0, rng);  // and it recovers
  EXPECT_EQ(chooser.Choose(), 4);
}

TEST(QuorumChooserTest, AWorkerThatNeverArrivesIsNotWaitedFor) {
  QuorumChooser chooser(3, 1, 5);
  for (int s = 0; s < 5; ++s) chooser.RecordStep({0.1, std::nullopt, 0.12});
  EXPECT_EQ(chooser.ProgressPerSecond(3), 0);
  EXPECT_EQ(chooser.Choose(), 2);
}

TEST(QuorumChooserTest, StaysAtOrAboveTheMinimum) {
  std::mt19937 rng(5);
  QuorumChooser chooser(4, 3, 20);
  // Two stragglers: alone N=2 would win, but at least 3 are aggregated.
  for (int s = 0; s < 20; ++s) chooser.RecordStep({0.1, 0.1, 0.5, 1.0});
  EXPECT_EQ(chooser.Choose(), 3);
  QuorumChooser unbounded(4, 1, 20);
  for (int s = 0; s < 20; ++s) unbounded.RecordStep({0.1, 0.1, 0.5, 1.0});
  EXPECT_EQ(unbounded.Choose(), 2);
  // Too few arrivals for the minimum in some step: the minimum.
  chooser.RecordStep({0.1, std::nullopt, std::nullopt, std::nullopt});
  EXPECT_EQ(chooser.Choose(), 3);
}

}  // namespace
}  // namespace pst
