#include "chief/chief_state.h"

#include <gtest/gtest.h>

#include <limits>

#include "common/clock.h"

namespace pst {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTimeout{500};

// Time passes only when a test says so.
class ChiefStateTest : public ::testing::Test {
 protected:
  void Silence() { clock_.Advance(kTimeout + milliseconds(1)); }
  FakeClock clock_;
};

TEST_F(ChiefStateTest, PsFollowedFromItsFirstHeartbeat) {
  ChiefState state(1, 100, /*num_workers=*/1, /*num_ps=*/2, "", clock_);
  Silence();
  // Never heard from: not declared dead (the chief waits for it elsewhere).
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  EXPECT_EQ(state.live_ps(), 0);
  state.RecordHeartbeat(wire::Role::Ps, 0);
  state.RecordHeartbeat(wire::Role::Ps, 1);
  EXPECT_EQ(state.live_ps(), 2);
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  clock_.Advance(kTimeout);  // exactly the timeout is not yet a silence
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  clock_.Advance(milliseconds(1));
  state.RecordHeartbeat(wire::Role::Ps, 0);
  EXPECT_EQ(state.DeclareSilentTasksDead(kTimeout), std::vector<std::string>{"ps:1"});
  EXPECT_EQ(state.live_ps(), 1);
  EXPECT_EQ(state.deaths(), 1);
  // Declared once, not again while it stays silent.
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  state.RecordHeartbeat(wire::Role::Ps, 1);
  EXPECT_EQ(state.live_ps(), 2);
  EXPECT_EQ(state.deaths(), 1);
}

// A chief held past the timeout (SIGSTOP) has its tasks' heartbeats still
// queued: once it excuses the silences, no one is dead until a whole
// timeout passes from then without a word.
TEST_F(ChiefStateTest, ExcusedSilencesCountFromTheExcuse) {
  ChiefState state(1, 100, /*num_workers=*/1, /*num_ps=*/1, "", clock_);
  state.set_state(wire::ClusterState::Training);
  state.RecordHeartbeat(wire::Role::Ps, 0);
  state.RecordJoin(0);
  clock_.Advance(std::chrono::seconds(20));  // the chief was stopped
  state.ExcuseSilences();
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  clock_.Advance(kTimeout / 2);
  state.RecordHeartbeat(wire::Role::Ps, 0);  // read from the queue
  clock_.Advance(kTimeout / 2 + milliseconds(1));
  EXPECT_EQ(state.DeclareSilentTasksDead(kTimeout), std::vector<std::string>{"worker:0"});
  EXPECT_EQ(state.deaths(), 1);
}

TEST_F(ChiefStateTest, WorkerFollowedFromJoinUntilItLeaves) {
  ChiefState state(1, 100, /*num_workers=*/2, /*num_ps=*/1, "", clock_);
  state.set_state(wire::ClusterState::Training);
  state.RecordHeartbeat(wire::Role::Worker, 0);  // before joining: not counted
  EXPECT_EQ(state.live_workers(), 0);
  state.RecordJoin(0);
  state.RecordJoin(1);
  EXPECT_EQ(state.live_workers(), 2);
  clock_.Advance(kTimeout);  // exactly the timeout is not yet a silence
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  clock_.Advance(milliseconds(1));
  state.RecordHeartbeat(wire::Role::Worker, 1);
  EXPECT_EQ(state.DeclareSilentTasksDead(kTimeout), std::vector<std::string>{"worker:0"});
  EXPECT_EQ(state.live_workers(), 1);
  EXPECT_EQ(state.gone_worker_mask(), (std::vector<bool>{true, false}));
  EXPECT_FALSE(state.EveryWorkerDone());
  // A restarted worker joins again and is alive.
  state.RecordJoin(0);
  EXPECT_EQ(state.live_workers(), 2);
  EXPECT_EQ(state.gone_worker_mask(), (std::vector<bool>{false, false}));
  // One that said goodbye is never declared dead.
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(wire::CreateReport(fbb, 0, 0, 0, 0, 0, 0, /*done=*/true));
  state.RecordReport(0, 0, *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer()));
  state.RecordReport(1, 0, *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer()));
  Silence();
  EXPECT_TRUE(state.DeclareSilentTasksDead(kTimeout).empty());
  EXPECT_TRUE(state.EveryWorkerDone());
  EXPECT_EQ(state.gone_worker_mask(), (std::vector<bool>{true, true}));
  EXPECT_EQ(state.deaths(), 1);
}

// A worker that asked to join before training opened, and did not ask
// again before it ended, still hears that training is over: the chief waits
// for it (or for its silence) before it exits.
TEST_F(ChiefStateTest, AWorkerThatAskedBeforeTrainingOpenedIsWaitedForAtTheEnd) {
  ChiefState state(1, 100, /*num_workers=*/2, /*num_ps=*/1, "", clock_);
  EXPECT_EQ(state.RecordJoin(1), wire::ClusterState::Starting);
  EXPECT_FALSE(state.EveryWorkerDone());
  state.set_state(wire::ClusterState::Training);
  EXPECT_EQ(state.RecordJoin(0), wire::ClusterState::Training);
  EXPECT_EQ(state.live_workers(), 1);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(wire::CreateReport(fbb, 0, 0, 0, 0, 0, 0, /*done=*/true));
  state.RecordReport(0, 0, *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer()));
  state.set_state(wire::ClusterState::Stopping);
  EXPECT_FALSE(state.EveryWorkerDone());  // worker:1 has not heard
  // Told training is over: it leaves without training, so no goodbye.
  EXPECT_EQ(state.RecordJoin(1), wire::ClusterState::Stopping);
  EXPECT_TRUE(state.EveryWorkerDone());
  EXPECT_EQ(state.live_workers(), 0);
}

TEST_F(ChiefStateTest, AWorkerNeverHeardFromIsKnownAsSuchUntilItSpeaks) {
  ChiefState state(1, 100, /*num_workers=*/3, /*num_ps=*/1, "", clock_);
  state.set_state(wire::ClusterState::Training);
  EXPECT_FALSE(state.EveryWorkerHeardFrom());
  state.RecordJoin(0);
  state.RecordHeartbeat(wire::Role::Worker, 1);
  EXPECT_FALSE(state.EveryWorkerHeardFrom());
  state.set_state(wire::ClusterState::Stopping);
  // Worker 2 starts after training ended: told so, and now heard from.
  EXPECT_EQ(state.RecordJoin(2), wire::ClusterState::Stopping);
  EXPECT_TRUE(state.EveryWorkerHeardFrom());
}

TEST_F(ChiefStateTest, AWaitingWorkerThatFallsSilentIsDeclaredDead) {
  ChiefState state(1, 100, /*num_workers=*/1, /*num_ps=*/1, "", clock_);
  state.RecordJoin(0);
  state.set_state(wire::ClusterState::Stopping);
  Silence();
  EXPECT_EQ(state.DeclareSilentTasksDead(kTimeout), std::vector<std::string>{"worker:0"});
  EXPECT_TRUE(state.EveryWorkerDone());
}

TEST_F(ChiefStateTest, RemembersTheFirstNonFiniteLoss) {
  ChiefState state(1, 100, /*num_workers=*/2, /*num_ps=*/1);
  const auto report = [&state](int worker, float loss, bool done) {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateReport(fbb, loss, 100, 0, 0, 0, 0, done));
    state.RecordReport(worker, 0, *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer()));
  };
  report(0, 0.5f, false);
  EXPECT_EQ(state.non_finite_loss(), "");
  report(1, std::numeric_limits<float>::quiet_NaN(),
         /*done=*/true);  // a worker's last word
  report(0, std::numeric_limits<float>::infinity(), false);
  EXPECT_EQ(state.non_finite_loss(), "worker:1 reported a training loss of nan");
}

TEST_F(ChiefStateTest, AdoptsAWorkerThatJoinedAnEarlierChief) {
  ChiefState state(1, 100, /*num_workers=*/2, /*num_ps=*/1);
  state.set_state(wire::ClusterState::Training);
  EXPECT_TRUE(state.Adopt(1));
  EXPECT_FALSE(state.Adopt(1));
  EXPECT_EQ(state.live_workers(), 1);
  state.RecordJoin(0);
  EXPECT_FALSE(state.Adopt(0));
  EXPECT_EQ(state.live_workers(), 2);
}

// A chief restarted after the workers trained to the end without it: it
// must not take "no worker heard from yet" for "every worker gone".
TEST_F(ChiefStateTest, ARestartedChiefWaitsForTheEarlierRunsWorkersToSpeak) {
  ChiefState state(1, 100, /*num_workers=*/2, /*num_ps=*/1, "", clock_);
  state.AwaitEarlierWorkersFor(milliseconds(300));
  state.set_state(wire::ClusterState::Training);
  state.set_state(wire::ClusterState::Stopping);  // the global step was already past the end
  EXPECT_FALSE(state.EveryWorkerDone());
  clock_.Advance(milliseconds(200));
  EXPECT_TRUE(state.Adopt(1));  // worker:1 speaks within the window
  clock_.Advance(milliseconds(100));
  EXPECT_FALSE(state.EveryWorkerDone());  // the window is over; worker:1 has not left
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(wire::CreateReport(fbb, 0, 0, 0, 0, 0, 0, /*done=*/true));
  state.RecordReport(1, 0, *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer()));
  EXPECT_TRUE(state.EveryWorkerDone());  // worker:0 never spoke: it had already gone
}

TEST_F(ChiefStateTest, TheEarlierWorkersWindowEndsOnItsOwn) {
  ChiefState state(1, 100, /*num_workers=*/2, /*num_ps=*/1, "", clock_);
  state.AwaitEarlierWorkersFor(milliseconds(300));
  state.set_state(wire::ClusterState::Stopping);
  clock_.Advance(milliseconds(299));
  EXPECT_FALSE(state.EveryWorkerDone());
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(state.EveryWorkerDone());
}

// Async, at the end: the chief knows which live workers have not yet
// reported a global step at --train_steps (their last push may still be on
// its way). One that left, died or rejoined counts as it is now.
TEST_F(ChiefStateTest, WorkersShortOfTheEndAreTheLiveOnesThatHaveNotReportedIt) {
  ChiefState state(1, 100, /*num_workers=*/3, /*num_ps=*/1, "", clock_);
  state.set_state(wire::ClusterState::Training);
  for (int w = 0; w < 3; ++w) state.RecordJoin(w);
  EXPECT_EQ(state.WorkersShortOf(100), (std::vector<int>{0, 1, 2}));
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(wire::CreateReport(fbb, 0, 0, 0, 0, 0, 0, /*done=*/false));
  const wire::Report& report = *flatbuffers::GetRoot<wire::Report>(fbb.GetBufferPointer());
  state.RecordReport(0, 101, report);
  state.RecordReport(1, 99, report);
  EXPECT_EQ(state.WorkersShortOf(100), (std::vector<int>{1, 2}));
  state.RecordReport(1, 100, report);
  EXPECT_EQ(state.WorkersShortOf(100), std::vector<int>{2});
  // worker:2 falls silent: declared dead, it pushes no more.
  clock_.Advance(milliseconds(1));
  state.RecordHeartbeat(wire::Role::Worker, 0);
  state.RecordHeartbeat(wire::Role::Worker, 1);
  clock_.Advance(kTimeout);
  EXPECT_EQ(state.DeclareSilentTasksDead(kTimeout), std::vector<std::string>{"worker:2"});
  EXPECT_TRUE(state.WorkersShortOf(100).empty());
  // Restarted, it joins again and trains: short of the end until it says so.
  state.RecordJoin(2);
  EXPECT_EQ(state.WorkersShortOf(100), std::vector<int>{2});
  // The cluster went back to a checkpoint: nobody is at the end any more.
  state.ForgetReportedSteps();
  EXPECT_EQ(state.WorkersShortOf(100), (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace pst
