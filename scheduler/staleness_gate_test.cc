// StalenessGate: the bound, lock-step at s = 0, the dead and the done
// releasing the others, (re)joining workers, closing. No transport, no
// sleeps.
#include "scheduler/staleness_gate.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace pst {
namespace {

using Verdict = Admission::Verdict;

class StalenessGateTest : public ::testing::Test {
 protected:
  // Worker `worker`, having completed `completed` steps, asks to start the next.
  Admission Ask(StalenessGate& gate, int worker, int64_t completed) {
    return gate.Ask(worker, completed);
  }
  // (worker, clock, slowest) of each grant.
  static std::vector<std::tuple<int, int64_t, int64_t>> Of(const std::vector<ClockGrant>& grants) {
    std::vector<std::tuple<int, int64_t, int64_t>> out;
    for (const ClockGrant& g : grants) out.emplace_back(g.worker, g.clock, g.slowest);
    return out;
  }
};

using Grants = std::vector<std::tuple<int, int64_t, int64_t>>;

TEST_F(StalenessGateTest, AWorkerRunsAtMostBoundAheadOfTheSlowest) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/2);
  EXPECT_EQ(Ask(gate, 0, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 1, 0).verdict, Verdict::kGo);
  // Worker 1 stays at 0: worker 0 may start steps at clocks 1 and 2, not 3.
  const Admission at1 = Ask(gate, 0, 1);
  EXPECT_EQ(at1.verdict, Verdict::kGo);
  EXPECT_EQ(at1.clock, 1);
  EXPECT_EQ(at1.slowest, 0);
  EXPECT_EQ(Ask(gate, 0, 2).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 3).verdict, Verdict::kWait);
  EXPECT_EQ(gate.slowest(), 0);
  // Worker 1 completes a step: worker 0, at 3, is within 2 of 1 again.
  const Admission slow = Ask(gate, 1, 1);
  EXPECT_EQ(slow.verdict, Verdict::kGo);
  EXPECT_EQ(Of(slow.released), (Grants{{0, 3, 1}}));
}

TEST_F(StalenessGateTest, BoundZeroIsLockStep) {
  StalenessGate gate(/*num_workers=*/3, /*bound=*/0);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(Ask(gate, w, 0).verdict, Verdict::kGo);
  // Each worker that completes step 1 waits for the last of the three.
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kWait);
  EXPECT_EQ(Ask(gate, 2, 1).verdict, Verdict::kWait);
  const Admission last = Ask(gate, 1, 1);
  EXPECT_EQ(last.verdict, Verdict::kGo);
  EXPECT_EQ(Of(last.released), (Grants{{0, 1, 1}, {2, 1, 1}}));
}

TEST_F(StalenessGateTest, ARepeatedRequestReplacesTheParkedOne) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/0);
  EXPECT_EQ(Ask(gate, 0, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 1, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kWait);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kWait);  // again, a second later
  // Let go once, not once per request.
  EXPECT_EQ(Of(Ask(gate, 1, 1).released), (Grants{{0, 1, 1}}));
}

TEST_F(StalenessGateTest, ADeadSlowWorkerReleasesTheOthers) {
  StalenessGate gate(/*num_workers=*/3, /*bound=*/1);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(Ask(gate, w, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 2).verdict, Verdict::kWait);
  EXPECT_EQ(Ask(gate, 1, 1).verdict, Verdict::kGo);
  // Worker 2, at 0, is declared dead: the slowest is now worker 1, at 1.
  EXPECT_EQ(Of(gate.Leave(2)), (Grants{{0, 2, 1}}));
  EXPECT_EQ(gate.slowest(), 1);
}

TEST_F(StalenessGateTest, ADoneWorkerHoldsNobody) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/0);
  EXPECT_EQ(Ask(gate, 0, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 1, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kWait);
  EXPECT_EQ(Of(gate.Leave(1)), (Grants{{0, 1, 1}}));
  // Alone, worker 0 is the slowest: it never waits.
  EXPECT_EQ(Ask(gate, 0, 2).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 3).verdict, Verdict::kGo);
}

TEST_F(StalenessGateTest, TheLeavingWorkersParkedRequestIsDropped) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/0);
  EXPECT_EQ(Ask(gate, 0, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 1, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kWait);
  EXPECT_TRUE(gate.Leave(0).empty());
  EXPECT_TRUE(gate.Close().empty());
}

TEST_F(StalenessGateTest, AWorkerThatComesBackStartsAtTheSlowestClock) {
  StalenessGate gate(/*num_workers=*/3, /*bound=*/1);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(Ask(gate, w, 0).verdict, Verdict::kGo);
  EXPECT_TRUE(gate.Leave(2).empty());  // declared dead at 0
  for (int64_t c = 1; c <= 5; ++c) {
    EXPECT_EQ(Ask(gate, 0, c).verdict, Verdict::kGo);
    EXPECT_EQ(Ask(gate, 1, c).verdict, Verdict::kGo);
  }
  // Worker 2 speaks again (it was only silent) at 0: it is raised to 5, so
  // worker 0 at 6 does not wait for it to catch up.
  const Admission back = Ask(gate, 2, 0);
  EXPECT_EQ(back.verdict, Verdict::kGo);
  EXPECT_EQ(back.clock, 5);
  EXPECT_EQ(back.slowest, 5);
  EXPECT_EQ(Ask(gate, 0, 6).verdict, Verdict::kGo);
  // From then on it counts as any other: one step on, it is at 6.
  EXPECT_EQ(Ask(gate, 2, 1).clock, 6);
}

TEST_F(StalenessGateTest, EveryWorkerCountsFromTheStart) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/1);
  EXPECT_EQ(gate.slowest(), 0);
  // Worker 1 has not asked yet: it is at 0 and holds worker 0 at 1.
  EXPECT_EQ(Ask(gate, 0, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 2).verdict, Verdict::kWait);
  EXPECT_TRUE(Ask(gate, 1, 0).released.empty());
  EXPECT_EQ(Of(Ask(gate, 1, 1).released), (Grants{{0, 2, 1}}));
}

TEST_F(StalenessGateTest, ARestartedWorkerKeepsItsClock) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/1);
  for (int64_t c = 0; c <= 4; ++c) {
    EXPECT_EQ(Ask(gate, 0, c).verdict, Verdict::kGo);
    EXPECT_EQ(Ask(gate, 1, c).verdict, Verdict::kGo);
  }
  // Worker 1 restarts before it is declared dead: its count starts at 0
  // again, its clock stays at 4 and goes on from there.
  const Admission restarted = Ask(gate, 1, 0);
  EXPECT_EQ(restarted.verdict, Verdict::kGo);
  EXPECT_EQ(restarted.clock, 4);
  EXPECT_EQ(Ask(gate, 0, 5).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 6).verdict, Verdict::kWait);
  EXPECT_EQ(Of(Ask(gate, 1, 1).released), (Grants{{0, 6, 5}}));
}

TEST_F(StalenessGateTest, CloseStopsTheParkedAndEveryLaterRequest) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/0);
  EXPECT_EQ(Ask(gate, 0, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 1, 0).verdict, Verdict::kGo);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kWait);
  EXPECT_EQ(Of(gate.Close()), (Grants{{0, 1, 0}}));
  EXPECT_EQ(Ask(gate, 1, 1).verdict, Verdict::kStop);
  EXPECT_EQ(Ask(gate, 0, 1).verdict, Verdict::kStop);
}

TEST_F(StalenessGateTest, NoSlowestOnceEveryWorkerLeft) {
  StalenessGate gate(/*num_workers=*/2, /*bound=*/3);
  EXPECT_TRUE(gate.Leave(0).empty());
  EXPECT_EQ(gate.slowest(), 0);
  EXPECT_TRUE(gate.Leave(1).empty());
  EXPECT_EQ(gate.slowest(), std::nullopt);
}

}  // namespace
}  // namespace pst
