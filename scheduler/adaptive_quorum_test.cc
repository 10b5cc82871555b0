#include "scheduler/adaptive_quorum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace pst {
namespace {

using std::chrono::milliseconds;
using TimePoint = AdaptiveQuorum::TimePoint;

// A sync cluster in simulated time: a worker idle when a step opens takes its
// token at once; the step closes at the N-th arrival of its gradients; a
// worker that arrives after its step closed takes the open step's token on
// arrival (it skips the steps it missed). compute(worker, step) is how long
// a worker's step takes, in ms. Returns the N of each step.
std::vector<int> Simulate(AdaptiveQuorum& adaptive, int workers, int steps,
                          const std::function<int(int, int64_t)>& compute) {
  std::vector<int> chosen;
  std::vector<int64_t> working_on(workers, -1);  // -1: idle
  std::vector<TimePoint> done_at(workers);
  TimePoint now;
  for (int64_t step = 0; step < steps; ++step) {
    const int n = adaptive.StepOpened(step, now);
    chosen.push_back(n);
    for (int w = 0; w < workers; ++w) {
      if (working_on[w] >= 0) continue;
      working_on[w] = step;
      done_at[w] = now + milliseconds(compute(w, step));
    }
    // Arrivals in time order until this step has n of them.
    int arrived = 0;
    while (arrived < n) {
      int next = -1;  // the busy worker done first
      for (int w = 0; w < workers; ++w) {
        if (working_on[w] >= 0 && (next < 0 || done_at[w] < done_at[next])) next = w;
      }
      now = done_at[next];
      adaptive.GradientArrived(next, working_on[next], now);
      if (working_on[next] == step) ++arrived;
      // Late for its own step: starts the open one at once.
      working_on[next] = working_on[next] == step ? -1 : step;
      if (working_on[next] == step) done_at[next] = now + milliseconds(compute(next, step));
    }
  }
  return chosen;
}

TEST(AdaptiveQuorumTest, AllWorkersUntilAStepIsTimed) {
  AdaptiveQuorum adaptive(3, 10);
  EXPECT_EQ(adaptive.quorum(), 3);
  EXPECT_EQ(adaptive.StepOpened(0, TimePoint()), 3);
  EXPECT_EQ(adaptive.StepOpened(1, TimePoint()), 3);
}

TEST(AdaptiveQuorumTest, EqualWorkersKeepEveryGradient) {
  AdaptiveQuorum adaptive(3, 10);
  const std::vector<int> n = Simulate(adaptive, 3, 60, [](int w, int64_t) { return 20 + w; });
  EXPECT_EQ(*std::min_element(n.begin(), n.end()), 3);
}

TEST(AdaptiveQuorumTest, AStragglerThatAppearsIsLeftOutAndTakenBackWhenItRecovers) {
  AdaptiveQuorum adaptive(3, 10);
  // Worker 2 takes 10x as long from step 100 to step 199.
  const std::vector<int> n = Simulate(adaptive, 3, 300, [](int w, int64_t step) {
    return w == 2 && step >= 100 && step < 200 ? 200 : 20;
  });
  EXPECT_EQ(*std::min_element(n.begin(), n.begin() + 100), 3);
  // Within a window and the horizon of its first slow step, and from then on.
  for (size_t s = 115; s < 200; ++s) EXPECT_EQ(n[s], 2) << "step " << s;
  // Once it is quick again its arrivals are seen within the horizon.
  for (size_t s = 230; s < 300; ++s) EXPECT_EQ(n[s], 3) << "step " << s;
}

// Worker 2 arrives 1.4x later than the others: N=2 would do 2/20 = 0.100
// batches/ms, N=3 3/28 = 0.107; then 1.55x later: 3/31 = 0.097, 3% below
// N=2's. N stays where it is until a choice is 5% better.
TEST(AdaptiveQuorumTest, NChangesOnlyForAFivePercentGain) {
  AdaptiveQuorum adaptive(3, 10);
  std::vector<int> n = Simulate(adaptive, 3, 40, [](int w, int64_t) { return w == 2 ? 28 : 20; });
  EXPECT_EQ(*std::min_element(n.begin(), n.end()), 3);
  n = Simulate(adaptive, 3, 40, [](int w, int64_t) { return w == 2 ? 31 : 20; });
  EXPECT_EQ(*std::min_element(n.begin(), n.end()), 3);
  n = Simulate(adaptive, 3, 40, [](int w, int64_t) { return w == 2 ? 36 : 20; });
  EXPECT_EQ(n.back(), 2);  // 3/36 = 0.083: N=2 is 20% better
}

TEST(AdaptiveQuorumTest, OnlyTheFirstOfARepeatedRequestCounts) {
  AdaptiveQuorum adaptive(2, 1);
  const TimePoint t0;
  adaptive.StepOpened(0, t0);
  adaptive.GradientArrived(0, 0, t0 + milliseconds(10));
  adaptive.GradientArrived(1, 0, t0 + milliseconds(12));
  // Worker 1's request repeated a second later changes nothing.
  adaptive.GradientArrived(1, 0, t0 + milliseconds(1012));
  adaptive.StepOpened(1, t0 + milliseconds(12));
  EXPECT_EQ(adaptive.StepOpened(2, t0 + milliseconds(24)), 2);
}

TEST(AdaptiveQuorumTest, ArrivalsOfUnknownStepsAndWorkersAreIgnored) {
  AdaptiveQuorum adaptive(2, 1);
  const TimePoint t0;
  adaptive.StepOpened(0, t0);
  adaptive.GradientArrived(0, 0, t0 + milliseconds(10));
  adaptive.GradientArrived(1, 7, t0 + milliseconds(11));   // a step never opened
  adaptive.GradientArrived(5, 0, t0 + milliseconds(11));   // no such worker
  adaptive.GradientArrived(-1, 0, t0 + milliseconds(11));  // no such worker
  adaptive.StepOpened(1, t0 + milliseconds(10));
  // Step 0 had one arrival: N = 2 could not have closed it.
  EXPECT_EQ(adaptive.StepOpened(2, t0 + milliseconds(20)), 1);
}

TEST(AdaptiveQuorumTest, ARecoveryForgetsTheStepsInFlight) {
  AdaptiveQuorum adaptive(2, 3);
  const TimePoint t0;
  adaptive.StepOpened(0, t0);
  adaptive.StepOpened(1, t0);
  // A restarted chief goes on from the shards' step 10: steps 0 and 1 will
  // never hear from anyone, and must not count as steps no N could close.
  adaptive.Forget();
  adaptive.StepOpened(10, t0);
  adaptive.GradientArrived(0, 10, t0 + milliseconds(5));
  adaptive.GradientArrived(1, 10, t0 + milliseconds(6));
  adaptive.StepOpened(11, t0 + milliseconds(6));
  EXPECT_EQ(adaptive.StepOpened(12, t0 + milliseconds(12)), 2);
}

}  // namespace
}  // namespace pst
