// Checkpoints with real processes: a new cluster resumes from the newest
// checkpoint, on the same number of ps or, resharded, on another; an async
// final checkpoint is one cut of the pushes; torn or corrupt checkpoints are
// skipped with a warning; a checkpoint of another model is refused.
#include <filesystem>
#include <fstream>

#include "common/tensor_file.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

class CheckpointTest : public SyntheticDataTest {
 protected:
  void SetUp() override { checkpoints_ = TestPath("-checkpoints"); }

  // Trains a fresh cluster to `train_steps`, checkpointing every 50 steps;
  // returns the chief's log.
  std::string Train(int num_ps, int train_steps, int expected_exit = 0,
                    const std::vector<std::string>& more_flags = {}) {
    LocalCluster cluster(num_ps, 1, TestDir());
    std::vector<std::string> flags = {"--data_dir=" + data_dir(),
                                      "--model=mlp",
                                      "--batch_size=50",
                                      "--train_steps=" + std::to_string(train_steps),
                                      "--eval_every_steps=0",
                                      "--checkpoint_dir=" + checkpoints_,
                                      "--checkpoint_every_steps=50",
                                      "--keep_checkpoints=3",
                                      "--rpc_timeout_ms=20000"};
    flags.insert(flags.end(), more_flags.begin(), more_flags.end());
    cluster.StartAll(flags);
    ChildProcess& chief = cluster.task("chief");
    EXPECT_EQ(chief.Wait(seconds(120)), expected_exit) << chief.Log();
    return chief.Log();
  }
  std::vector<std::string> Checkpoints() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(checkpoints_)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("ckpt-", 0) == 0) names.push_back(name);  // not cluster_id
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string Newest() const { return checkpoints_ + "/" + Checkpoints().back(); }
  std::string SecondNewest() const {
    const auto names = Checkpoints();
    return checkpoints_ + "/" + names[names.size() - 2];
  }

  std::string checkpoints_;
};

TEST_F(CheckpointTest, NewClusterResumesFromTheNewestCheckpoint) {
  const std::string first = Train(2, 200);
  EXPECT_EQ(ReportValue(first, "Global-Step: ").value_or(0), 200);
  // Saved as the chief sees the step pass multiples of 50, and at the end;
  // the newest 3 are kept, each complete.
  size_t saved = 0;
  for (size_t at = first.find(" saved at step "); at != std::string::npos;
       at = first.find(" saved at step ", at + 1)) {
    ++saved;
  }
  const auto names = Checkpoints();
  ASSERT_GE(saved, 2u) << first;
  EXPECT_EQ(names.size(), std::min<size_t>(saved, 3));
  EXPECT_EQ(names.back(), "ckpt-000000000200");
  for (const auto& n : names) {
    for (const char* f : {"manifest", "ps-0.part", "ps-1.part"}) {
      EXPECT_TRUE(fs::exists(checkpoints_ + "/" + n + "/" + f)) << n << "/" << f;
    }
  }
  const std::string second = Train(2, 300);
  EXPECT_NE(second.find("ckpt-000000000200 at step 200"), std::string::npos) << second;
  EXPECT_EQ(ReportValue(second, "Global-Step: ").value_or(0), 300);
}

TEST_F(CheckpointTest, CorruptNewestPartIsSkippedWithAWarning) {
  Train(1, 150);
  const std::string newest = Newest(), previous = SecondNewest();
  {
    std::fstream part(newest + "/ps-0.part", std::ios::in | std::ios::out | std::ios::binary);
    part.seekp(100);
    part.put('\x5a');
  }
  const std::string log = Train(1, 200);
  EXPECT_NE(log.find("skipping checkpoint " + newest), std::string::npos) << log;
  EXPECT_NE(log.find("ps-0.part does not match its manifest"), std::string::npos) << log;
  EXPECT_NE(log.find("restored checkpoint " + previous), std::string::npos) << log;
}

TEST_F(CheckpointTest, TruncatedPartIsSkipped) {
  Train(1, 150);
  const std::string newest = Newest(), previous = SecondNewest();
  fs::resize_file(newest + "/ps-0.part", 64);
  const std::string log = Train(1, 200);
  EXPECT_NE(log.find("skipping checkpoint " + newest), std::string::npos) << log;
  EXPECT_NE(log.find("restored checkpoint " + previous), std::string::npos) << log;
}

TEST_F(CheckpointTest, CheckpointWithoutManifestIsIncomplete) {
  Train(1, 150);
  const std::string newest = Newest(), previous = SecondNewest();
  fs::remove(newest + "/manifest");
  const std::string log = Train(1, 200);
  EXPECT_NE(log.find("skipping checkpoint " + newest + ": incomplete"), std::string::npos) << log;
  EXPECT_NE(log.find("restored checkpoint " + previous), std::string::npos) << log;
}

// Async: three workers push until the end, each after a 3 ms pause, so a
// push is often on its way as the global step passes it. The final
// checkpoint, labelled with the global step S, holds exactly S updates of
// every variable (each @version is S): no push is in one shard's part and
// missing from the other's. (Before the chief waited for the workers to
// hold, 3 runs in 4 failed.)
TEST_F(CheckpointTest, AnAsyncFinalCheckpointHoldsEveryPushItCounts) {
  LocalCluster cluster(2, 3, TestDir());
  cluster.StartAll({"--data_dir=" + data_dir(), "--model=wide_mlp", "--batch_size=10",
                    "--simulated_delay_ms=3", "--train_steps=300", "--eval_every_steps=0",
                    "--checkpoint_dir=" + checkpoints_, "--checkpoint_every_steps=0",
                    "--rpc_timeout_ms=20000"});
  for (const TaskExit& e : cluster.WaitAll(seconds(120))) EXPECT_EQ(e.code, 0) << e.name;
  std::ifstream manifest(Newest() + "/manifest");
  int64_t step = -1;
  for (std::string word; manifest >> word;) {
    if (word == "step") manifest >> step;
  }
  ASSERT_GE(step, 300) << Newest();
  int versions = 0;
  for (const char* part : {"/ps-0.part", "/ps-1.part"}) {
    StatusOr<NamedTensors> tensors = ReadTensorFile(Newest() + part);
    ASSERT_TRUE(tensors.ok()) << tensors.status().ToString();
    for (const auto& [name, tensor] : *tensors) {
      if (name.size() < 8 || name.compare(name.size() - 8, 8, "@version") != 0) continue;
      ++versions;
      EXPECT_EQ(tensor.i64()[0], step) << name << " in " << part;
    }
  }
  EXPECT_GE(versions, 4);  // mlp: two weights and two biases
}

// 1 ps, then 2, then 3, the mlp's first weights partitioned: each cluster
// restores the last one's final checkpoint cut for its own ps and trains on
// from its step, async and sync.
TEST_F(CheckpointTest, AnotherNumberOfPsResumesFromTheCheckpointResharded) {
  for (const char* mode : {"async", "sync"}) {
    SCOPED_TRACE(mode);
    fs::remove_all(checkpoints_);
    const std::vector<std::string> flags = {std::string("--mode=") + mode,
                                            "--partition_bytes=20000"};
    Train(1, 100, 0, flags);
    for (int ps : {2, 3}) {
      const int64_t from_step = 100 + 50 * (ps - 2), to_step = from_step + 50;
      const std::string log = Train(ps, to_step, 0, flags);
      const std::string name = "ckpt-" + std::string(12 - std::to_string(from_step).size(), '0') +
                               std::to_string(from_step);
      EXPECT_NE(log.find("resharded checkpoint " + name + " from " + std::to_string(ps - 1) +
                         " ps to " + std::to_string(ps)),
                std::string::npos)
          << log;
      EXPECT_NE(log.find(name + " at step " + std::to_string(from_step)), std::string::npos) << log;
      EXPECT_NE(log.find("/part_1 -> ps:"), std::string::npos) << "not partitioned\n" << log;
      EXPECT_EQ(ReportValue(log, "Global-Step: ").value_or(0), to_step) << log;
      EXPECT_FALSE(fs::exists(checkpoints_ + "/resharding"));
    }
  }
}

TEST_F(CheckpointTest, AnotherModelIsRefused) {
  Train(1, 100);
  const std::string log = Train(1, 150, /*expected_exit=*/1, {"--model=wide_mlp"});
  EXPECT_NE(log.find("written for another model or variable placement"), std::string::npos) << log;
}

}  // namespace
}  // namespace pst
