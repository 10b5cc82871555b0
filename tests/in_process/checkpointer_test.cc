// The Checkpointer against real ps shards over the in-process transport:
// what a save writes and its manifest says, pruning, restoring, and what a
// failed save leaves behind. No sockets, no processes.
#include "chief/checkpoints/checkpointer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/in_process/checkpointing_shards.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

std::string TestDir() {
  return (fs::path(::testing::TempDir()) / ("checkpointer_test_" + std::to_string(getpid())))
      .string();
}

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(shards_.Initialize(5, 1.0f).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  Checkpointer MakeCheckpointer(int keep) {
    return Checkpointer(dir_, keep, CheckpointingShards::kCluster, &shards_.admin());
  }
  std::vector<std::string> Folders() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.is_directory()) names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  const std::string dir_ = TestDir();
  // Both shards write into the chief's folder, as on a shared file system.
  CheckpointingShards shards_{{dir_, dir_}};
};

TEST_F(CheckpointerTest, SaveWritesEveryPartAndAManifestDescribingThem) {
  Checkpointer checkpointer = MakeCheckpointer(5);
  ASSERT_TRUE(checkpointer.Save(5, 1700000000).ok());

  const std::string folder = dir_ + "/" + Checkpointer::Name(5);
  EXPECT_EQ(Checkpointer::Name(5), "ckpt-000000000005");
  StatusOr<CheckpointManifest> manifest = ReadManifest(folder);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->step, 5);
  EXPECT_EQ(manifest->placement_hash, shards_.chief().placement().Hash());
  EXPECT_EQ(manifest->cluster_id, CheckpointingShards::kCluster);
  EXPECT_EQ(manifest->run_started_unix, 1700000000);
  ASSERT_EQ(manifest->parts.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    StatusOr<FileDigest> digest = DigestFile(folder + "/" + PartFileName(k));
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    EXPECT_EQ(manifest->parts[k].bytes, digest->bytes) << "part " << k;
    EXPECT_EQ(manifest->parts[k].crc32, digest->crc32) << "part " << k;
  }
  StatusOr<std::optional<FoundCheckpoint>> newest = checkpointer.FindNewest();
  ASSERT_TRUE(newest.ok() && newest->has_value());
  EXPECT_EQ((*newest)->name, "ckpt-000000000005");
}

TEST_F(CheckpointerTest, KeepsOnlyTheNewestKeepCheckpoints) {
  Checkpointer checkpointer = MakeCheckpointer(2);
  for (int64_t step : {10, 20, 30}) ASSERT_TRUE(checkpointer.Save(step, 0).ok());
  EXPECT_EQ(Folders(), (std::vector<std::string>{"ckpt-000000000020", "ckpt-000000000030"}));
}

TEST_F(CheckpointerTest, RestoreBringsTheSavedValuesBack) {
  Checkpointer checkpointer = MakeCheckpointer(5);
  ASSERT_TRUE(checkpointer.Save(5, 0).ok());
  ASSERT_TRUE(shards_.Initialize(0, 10.0f).ok());  // a recovery initializes every shard again
  ASSERT_EQ(shards_.Values(), (std::vector<double>{0, 10, 11, 12}));

  StatusOr<std::optional<FoundCheckpoint>> newest = checkpointer.FindNewest();
  ASSERT_TRUE(newest.ok() && newest->has_value());
  ASSERT_TRUE(checkpointer.Restore(**newest).ok());
  EXPECT_EQ(shards_.Values(), (std::vector<double>{5, 1, 2, 3}));
}

// ps:1 cannot write its part (a folder is in the way of its file); ps:0 can.
TEST_F(CheckpointerTest, AFailingShardFailsTheSaveAndLeavesNoHalfCheckpoint) {
  Checkpointer checkpointer = MakeCheckpointer(5);
  ASSERT_TRUE(checkpointer.Save(5, 0).ok());
  const std::string folder = dir_ + "/" + Checkpointer::Name(9);
  fs::create_directories(folder + "/" + PartFileName(1));

  const Status saved = checkpointer.Save(9, 0);
  EXPECT_FALSE(saved.ok());
  EXPECT_NE(saved.message().find(folder), std::string::npos) << saved.ToString();
  EXPECT_FALSE(fs::exists(folder));
  StatusOr<std::optional<FoundCheckpoint>> newest = checkpointer.FindNewest();
  ASSERT_TRUE(newest.ok() && newest->has_value());
  EXPECT_EQ((*newest)->manifest.step, 5);
}

TEST_F(CheckpointerTest, FindNewestSkipsACheckpointWhosePartIsCorrupt) {
  Checkpointer checkpointer = MakeCheckpointer(5);
  ASSERT_TRUE(checkpointer.Save(5, 0).ok());
  ASSERT_TRUE(checkpointer.Save(6, 0).ok());
  {
    std::fstream part(dir_ + "/" + Checkpointer::Name(6) + "/" + PartFileName(0),
                      std::ios::in | std::ios::out | std::ios::binary);
    part.seekp(10);
    part.put('\x7f');
  }
  StatusOr<std::optional<FoundCheckpoint>> newest = checkpointer.FindNewest();
  ASSERT_TRUE(newest.ok() && newest->has_value());
  EXPECT_EQ((*newest)->manifest.step, 5);
}

TEST_F(CheckpointerTest, ACheckpointOfAnotherModelIsRefused) {
  ASSERT_TRUE(MakeCheckpointer(5).Save(5, 0).ok());
  CheckpointingShards wider({dir_, dir_}, /*w_size=*/4);
  ASSERT_TRUE(wider.Initialize(0, 0.0f).ok());
  Checkpointer other(dir_, 5, CheckpointingShards::kCluster, &wider.admin());
  StatusOr<std::optional<FoundCheckpoint>> newest = other.FindNewest();
  EXPECT_EQ(newest.status().code(), Code::kFailedPrecondition) << newest.status().ToString();
  EXPECT_NE(newest.status().message().find("another model"), std::string::npos)
      << newest.status().ToString();
}

// Written over 2 ps, restored over 3 and over 1: the same step and values,
// and the cut parts do not stay behind.
TEST_F(CheckpointerTest, ACheckpointOfAnotherPsCountIsRestoredResharded) {
  ASSERT_TRUE(MakeCheckpointer(5).Save(5, 0).ok());  // step 5, w = {1, 2, 3}
  for (int ps : {3, 1}) {
    SCOPED_TRACE(std::to_string(ps) + " ps");
    CheckpointingShards other(std::vector<std::string>(ps, dir_));
    ASSERT_TRUE(other.Initialize(0, 9.0f).ok());
    Checkpointer checkpointer(dir_, 5, CheckpointingShards::kCluster, &other.admin());
    StatusOr<std::optional<FoundCheckpoint>> newest = checkpointer.FindNewest();
    ASSERT_TRUE(newest.ok() && newest->has_value()) << newest.status().ToString();
    EXPECT_EQ((*newest)->manifest.parts.size(), 2u);
    ASSERT_TRUE(checkpointer.Restore(**newest).ok());
    EXPECT_EQ(other.Values(), (std::vector<double>{5, 1, 2, 3}));
    EXPECT_EQ(Folders(), (std::vector<std::string>{Checkpointer::Name(5)}));
  }
}

TEST_F(CheckpointerTest, TheClusterIdIsKeptBeforeAndAfterTheFirstCheckpoint) {
  EXPECT_EQ(KeptClusterId(dir_), 0u);
  ASSERT_TRUE(KeepClusterId(dir_, 42).ok());
  EXPECT_EQ(KeptClusterId(dir_), 42u);
  ASSERT_TRUE(MakeCheckpointer(5).Save(5, 0).ok());  // the newest manifest's id wins
  EXPECT_EQ(KeptClusterId(dir_), CheckpointingShards::kCluster);
}

}  // namespace
}  // namespace pst
