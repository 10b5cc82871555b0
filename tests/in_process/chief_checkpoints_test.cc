// ChiefCheckpoints' cadence and outcomes (async mode) against real ps shards
// over the in-process transport, with a FakeClock: no sockets, no
// processes, no sleeps (one sync test waits a real second for its step).
#include "chief/chief_checkpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/in_process/checkpointing_shards.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

std::string TestDir() {
  return (fs::path(::testing::TempDir()) / ("chief_checkpoints_test_" + std::to_string(getpid())))
      .string();
}

double UnixSecondsNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class ChiefCheckpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.checkpoint_dir = dir_;
    options_.checkpoint_every_steps = 0;
    options_.checkpoint_every_secs = 0;
    ASSERT_TRUE(shards_.Initialize(1, 1.0f).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Made once the test has set its options; training opens at `step`.
  ChiefCheckpoints& Open(int64_t step = 0) {
    checkpoints_ =
        std::make_unique<ChiefCheckpoints>(options_, &checkpointer_, nullptr, &keeper_, clock_);
    checkpoints_->Restart(step, clock_.Now());
    return *checkpoints_;
  }
  bool Saved(int64_t step) const { return fs::exists(dir_ + "/" + Checkpointer::Name(step)); }

  const std::string dir_ = TestDir();
  ChiefOptions options_;
  FakeClock clock_;
  std::atomic<bool> stop_{false};
  CheckpointingShards shards_{{dir_, dir_}};
  Checkpointer checkpointer_{dir_, 100, CheckpointingShards::kCluster, &shards_.admin()};
  ShardKeeper keeper_{options_, &shards_.admin(), nullptr, &checkpointer_, stop_};
  std::unique_ptr<ChiefCheckpoints> checkpoints_;
};

// The shards can no longer write a part: a folder is where ps:0's part of
// the checkpoint at each of `steps` would go (ps:0 still serves).
class StorageFailsTest : public ChiefCheckpointsTest {
 protected:
  void Block(std::initializer_list<int64_t> steps) {
    for (int64_t step : steps) {
      fs::create_directories(dir_ + "/" + Checkpointer::Name(step) + "/" + PartFileName(0));
    }
  }
};

TEST_F(ChiefCheckpointsTest, DueOncePerEveryStepsGlobalSteps) {
  options_.checkpoint_every_steps = 10;
  ChiefCheckpoints& checkpoints = Open();
  EXPECT_FALSE(checkpoints.Due(9));
  ASSERT_TRUE(checkpoints.Due(10));
  ASSERT_TRUE(checkpoints.Save(10).ok());
  EXPECT_TRUE(Saved(10));
  EXPECT_EQ(checkpoints.last_saved_step(), 10);
  EXPECT_FALSE(checkpoints.Due(19));
  EXPECT_TRUE(checkpoints.Due(20));
  EXPECT_TRUE(checkpoints.Due(27));  // a step skipped over the boundary
}

TEST_F(ChiefCheckpointsTest, DueOncePerEverySecsSinceTheLastSave) {
  options_.checkpoint_every_secs = 60;
  ChiefCheckpoints& checkpoints = Open();
  EXPECT_EQ(checkpoints.seconds_since_checkpoint(), -1);
  clock_.Advance(seconds(59));
  EXPECT_FALSE(checkpoints.Due(3));
  clock_.Advance(seconds(1));
  ASSERT_TRUE(checkpoints.Due(3));
  ASSERT_TRUE(checkpoints.Save(3).ok());
  EXPECT_EQ(checkpoints.seconds_since_checkpoint(), 0);
  clock_.Advance(seconds(30));
  EXPECT_FALSE(checkpoints.Due(4));
  EXPECT_EQ(checkpoints.seconds_since_checkpoint(), 30);
  clock_.Advance(seconds(30));
  EXPECT_TRUE(checkpoints.Due(4));
}

// Training resumed at a restored step: the cadence counts from there.
TEST_F(ChiefCheckpointsTest, ARestartMovesTheCadenceToTheResumedStep) {
  options_.checkpoint_every_steps = 10;
  options_.checkpoint_every_secs = 60;
  ChiefCheckpoints& checkpoints = Open();
  clock_.Advance(seconds(50));
  checkpoints.Restart(25, clock_.Now());
  EXPECT_EQ(checkpoints.last_saved_step(), 25);
  clock_.Advance(seconds(59));
  EXPECT_FALSE(checkpoints.Due(29));
  EXPECT_TRUE(checkpoints.Due(30));
}

TEST_F(ChiefCheckpointsTest, NothingIsDueWithoutACheckpointer) {
  options_.checkpoint_every_steps = 1;
  ChiefCheckpoints checkpoints(options_, nullptr, nullptr, &keeper_, clock_);
  EXPECT_FALSE(checkpoints.enabled());
  EXPECT_FALSE(checkpoints.Due(100));
  EXPECT_EQ(checkpoints.SaveOnStop(), "without a checkpoint (no --checkpoint_dir)");
}

TEST_F(StorageFailsTest, AFailedSaveIsRetriedWhenDueAndTooManyInARowAbort) {
  options_.checkpoint_every_steps = 10;
  options_.max_checkpoint_failures = 2;
  ChiefCheckpoints& checkpoints = Open();
  Block({10, 20});
  ASSERT_TRUE(checkpoints.Save(10).ok());  // logged; training goes on
  EXPECT_EQ(checkpoints.consecutive_failures(), 1);
  EXPECT_FALSE(Saved(10));
  EXPECT_FALSE(checkpoints.Due(19));  // not at every step until it works
  ASSERT_TRUE(checkpoints.Due(20));
  const Status second = checkpoints.Save(20);
  EXPECT_EQ(second.code(), Code::kAborted) << second.ToString();
  EXPECT_NE(second.message().find("--max_checkpoint_failures=2"), std::string::npos);
}

TEST_F(StorageFailsTest, ASaveThatWorksAgainClearsTheFailures) {
  options_.max_checkpoint_failures = 2;
  ChiefCheckpoints& checkpoints = Open();
  Block({10});
  ASSERT_TRUE(checkpoints.Save(10).ok());
  ASSERT_TRUE(checkpoints.Save(20).ok());
  EXPECT_EQ(checkpoints.consecutive_failures(), 0);
  EXPECT_EQ(checkpoints.last_saved_step(), 20);
}

TEST_F(StorageFailsTest, TheFinalSaveNeverStopsTheRunForStorage) {
  options_.max_checkpoint_failures = 1;
  ChiefCheckpoints& checkpoints = Open();
  Block({40});
  EXPECT_TRUE(checkpoints.SaveFinal(40).ok());
  EXPECT_EQ(checkpoints.last_saved_step(), 0);
  // Tried once: not again after training (it would work now, the failed
  // save having removed its folder).
  checkpoints.SaveAfterTraining(40);
  EXPECT_FALSE(Saved(40));
}

// Sync: a checkpoint waits for the step in flight, which a lost ps never
// finishes. It looks at the shards while it waits, so the loss is reported
// (Unavailable: the timeline recovers) within a second or so; it once
// waited --rpc_timeout_ms blind (here an hour: the test would time out).
TEST_F(ChiefCheckpointsTest, ASyncCheckpointWaitingForALostPsReportsItsLoss) {
  options_.rpc_timeout_ms = 3600 * 1000;
  SyncQuorum quorum;
  quorum.fixed = 1;
  SyncCoordinator sync({1}, 1, 100, nullptr, quorum);
  sync.Open(0);  // step 0 in flight; no worker will push it
  ShardKeeper keeper(options_, &shards_.admin(), &sync, &checkpointer_, stop_);
  ChiefCheckpoints checkpoints(options_, &checkpointer_, &sync, &keeper, clock_);
  checkpoints.Restart(0, clock_.Now());
  shards_.Stop(1);
  const Status saved = checkpoints.Save(0);
  EXPECT_EQ(saved.code(), Code::kUnavailable) << saved.ToString();
  EXPECT_FALSE(Saved(0));
}

TEST_F(ChiefCheckpointsTest, AfterTrainingSavesUnlessTheNewestIsAtTheLastStep) {
  ChiefCheckpoints& checkpoints = Open();
  ASSERT_TRUE(checkpoints.Save(30).ok());
  fs::remove_all(dir_ + "/" + Checkpointer::Name(30));  // so that a second save would show
  checkpoints.SaveAfterTraining(30);
  EXPECT_FALSE(Saved(30));
  checkpoints.SaveAfterTraining(35);
  EXPECT_TRUE(Saved(35));
  EXPECT_EQ(checkpoints.last_saved_step(), 35);
}

TEST_F(ChiefCheckpointsTest, OnStopSavesTheShardsGlobalStep) {
  ASSERT_TRUE(shards_.Initialize(7, 1.0f).ok());
  ChiefCheckpoints& checkpoints = Open();
  EXPECT_EQ(checkpoints.SaveOnStop(), "after checkpointing at step 7");
  EXPECT_TRUE(Saved(7));
  EXPECT_EQ(checkpoints.SaveOnStop(), "after checkpointing at step 7");  // saved already
}

TEST_F(ChiefCheckpointsTest, OnStopBeforeAnyStepSavesNothing) {
  ASSERT_TRUE(shards_.Initialize(0, 1.0f).ok());
  EXPECT_EQ(Open().SaveOnStop(), "without a checkpoint: no step was trained");
}

TEST_F(ChiefCheckpointsTest, ANewRunStartsNow) {
  ASSERT_TRUE(checkpointer_.Save(5, 1000).ok());  // an older run's, ignored at step 0
  ChiefCheckpoints& checkpoints = Open();
  EXPECT_EQ(checkpoints.InheritRunStart(0), 0);
  ASSERT_TRUE(checkpoints.Save(10).ok());
  StatusOr<CheckpointManifest> manifest = ReadManifest(dir_ + "/" + Checkpointer::Name(10));
  ASSERT_TRUE(manifest.ok());
  EXPECT_NEAR(static_cast<double>(manifest->run_started_unix), UnixSecondsNow(), 5);
}

// A restarted chief continues the run its newest manifest records: the
// report covers the earlier time, and later manifests keep its start.
TEST_F(ChiefCheckpointsTest, AResumedRunInheritsItsStartFromTheNewestManifest) {
  const int64_t started = static_cast<int64_t>(UnixSecondsNow()) - 100;
  ASSERT_TRUE(checkpointer_.Save(5, started).ok());
  ChiefCheckpoints& checkpoints = Open(5);
  EXPECT_NEAR(checkpoints.InheritRunStart(5), 100, 5);
  ASSERT_TRUE(checkpoints.Save(10).ok());
  StatusOr<CheckpointManifest> manifest = ReadManifest(dir_ + "/" + Checkpointer::Name(10));
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->run_started_unix, started);
}

}  // namespace
}  // namespace pst
