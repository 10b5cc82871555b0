// --follow on a real cluster: click-log files appear while 2 ps and 2
// workers train; a worker is killed in the middle of a file and started
// again, the chief is killed and started again, and a ps is killed and
// started again (the cluster goes back to its last checkpoint). The count
// that matters is the ps' own: the stream ledger in each ps' final
// checkpoint part says how many lines of each file that shard applied,
// which must be every line of the file, once.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include "common/tensor_file.h"
#include "job/export_files.h"
#include "ps/streaming/stream_ledger.h"
#include "tests/integration/child_process.h"
#include "tests/integration/export_check.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kFiles = 12;
constexpr int kLinesPerFile = 3000;  // 30 batches of 100 (the last file's are all full)

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Waits until `log()` holds `needle` `times` times; false after `timeout`.
template <typename Log>
bool WaitFor(Log log, const std::string& needle, int times, seconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < give_up) {
    if (Count(log(), needle) >= times) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

class StreamingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_dir_ = new std::string(MakeTestDir("StreamingTest-data"));
    ASSERT_EQ(
        MakeCtrProblem(*data_dir_, {"--train_examples=" + std::to_string(kFiles * kLinesPerFile),
                                    "--test_examples=5000", "--seed=3", "--lr_epochs=0"}),
        "");
  }
  static void TearDownTestSuite() {
    fs::remove_all(*data_dir_);
    delete data_dir_;
  }

  // File k of the stream (lines [k * kLinesPerFile, ...) of train.txt).
  static void Publish(const std::string& in, int k) {
    PublishStreamFile(*data_dir_ + "/train.txt", in, k, kLinesPerFile);
  }

  static std::vector<std::string> Flags(const std::string& dir) {
    return {"--dataset=criteo",
            "--model=deepfm",
            "--follow",
            "--train_files=" + dir + "/in/part-*",
            "--test_file=" + *data_dir_ + "/test.txt",
            "--embedding_rows=50000",
            "--batch_size=100",
            "--train_steps=0",
            "--checkpoint_dir=" + dir + "/ckpt",
            "--checkpoint_every_secs=1",
            "--heartbeat_timeout_ms=3000",
            "--export_every_secs=1",
            "--export_base_every=1000",
            "--run_dir=" + dir + "/run"};
  }

  // Lines applied per stream by each ps, from the newest checkpoint's parts.
  static std::vector<std::map<uint64_t, StreamProgress>> LedgersOfNewestCheckpoint(
      const std::string& dir) {
    std::string newest;
    for (const auto& entry : fs::directory_iterator(dir + "/ckpt")) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("ckpt-", 0) == 0 && fs::exists(entry.path() / "manifest") && name > newest) {
        newest = name;
      }
    }
    std::vector<std::map<uint64_t, StreamProgress>> ledgers;
    for (int k = 0; k < 2; ++k) {
      StatusOr<NamedTensors> part =
          ReadTensorFile(dir + "/ckpt/" + newest + "/ps-" + std::to_string(k) + ".part");
      EXPECT_TRUE(part.ok()) << part.status().ToString();
      std::map<uint64_t, StreamProgress> by_stream;
      if (!part.ok()) return ledgers;
      for (const auto& [name, tensor] : *part) {
        if (name != "@stream_ledger") continue;
        StatusOr<StreamLedger> ledger = StreamLedger::FromTensor(tensor);
        EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
        for (int f = 0; f < kFiles; ++f) {
          const std::string path = dir + "/in/part-" + std::to_string(1000 + f);
          by_stream[StreamIdOf(path)] = ledger->Progress(StreamIdOf(path));
        }
      }
      ledgers.push_back(std::move(by_stream));
    }
    return ledgers;
  }

  // Every ps applied every line of every file, once.
  static void ExpectEveryLineOnce(const std::string& dir) {
    const auto ledgers = LedgersOfNewestCheckpoint(dir);
    ASSERT_EQ(ledgers.size(), 2u);
    for (int k = 0; k < 2; ++k) {
      ASSERT_EQ(ledgers[k].size(), static_cast<size_t>(kFiles)) << "ps:" << k << " has no ledger";
      for (const auto& [stream, p] : ledgers[k]) {
        EXPECT_EQ(p.examples, kLinesPerFile) << "ps:" << k << " stream " << stream;
        EXPECT_TRUE(p.complete) << "ps:" << k << " stream " << stream;
      }
    }
  }

  static std::string* data_dir_;
};

std::string* StreamingTest::data_dir_ = nullptr;

// With dynamic tables too small for the stream's keys: the export follows
// rows created, written and evicted.
TEST_F(StreamingTest, EveryLineOnceThroughAWorkerKilledMidFileAndAChiefRestart) {
  LocalCluster cluster(2, 2, MakeTestDir("StreamingTest-worker-chief"));
  const std::string dir = cluster.dir();
  fs::create_directories(dir + "/in");
  Publish(dir + "/in", 0);
  std::vector<std::string> flags = Flags(dir);
  std::replace(flags.begin(), flags.end(), std::string("--embedding_rows=50000"),
               std::string("--embedding_capacity=4000"));
  for (int k = 0; k < 2; ++k) cluster.StartTask("ps", k, {"--checkpoint_dir=" + dir + "/ckpt"});
  cluster.StartTask("chief", 0, flags);
  // Worker 0 is slow (20 ms a batch), so that it is killed inside a file:
  // once it logs its 5th batch, 25 remain.
  std::vector<std::string> slow = flags;
  slow.insert(slow.end(), {"--simulated_delay_ms=20", "--worker_log_every_steps=5"});
  cluster.StartTask("worker", 0, slow);
  cluster.StartTask("worker", 1, flags);
  for (int k = 1; k < 4; ++k) Publish(dir + "/in", k);
  auto worker0 = [&] { return cluster.task("worker", 0).Log(); };
  ASSERT_TRUE(WaitFor(worker0, "Step: ", 1, seconds(120))) << worker0();
  cluster.task("worker", 0).Signal(SIGKILL);
  cluster.task("worker", 0).Wait(seconds(10));
  cluster.StartTask("worker", 0, flags);
  // Worker 0 back under its index gets its file again; if it took longer
  // than the heartbeat timeout (a loaded machine), the chief gave the file
  // to worker 1. Either resumes it where the shards stand.
  auto workers = [&] { return worker0() + cluster.task("worker", 1).Log(); };
  ASSERT_TRUE(WaitFor(workers, " resumes ", 1, seconds(60))) << workers();
  for (int k = 4; k < 8; ++k) Publish(dir + "/in", k);
  auto chief = [&] { return cluster.task("chief").Log(); };
  ASSERT_TRUE(WaitFor(chief, " trained: ", 5, seconds(120))) << chief();
  // The chief killed and started again: a new queue hands out every file,
  // and the shards' ledgers say which are done.
  cluster.task("chief").Signal(SIGKILL);
  cluster.task("chief").Wait(seconds(10));
  cluster.StartTask("chief", 0, flags);
  for (int k = 8; k < kFiles; ++k) Publish(dir + "/in", k);
  ASSERT_TRUE(
      WaitFor(chief, "stream caught up: " + std::to_string(kFiles) + " files", 1, seconds(180)))
      << chief();
  cluster.task("chief").Signal(SIGTERM);
  const std::vector<TaskExit> exits = cluster.WaitAll(seconds(120));
  for (const TaskExit& e : exits) {
    EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << cluster.task("chief").Log();
  }
  const std::string log = cluster.task("chief").Log();
  EXPECT_NE(log.find("Test-AUC: "), std::string::npos) << log;
  // The tables were full: rows were evicted.
  EXPECT_TRUE(std::regex_search(log, std::regex("holds 4000 rows .*, evicted [1-9]"))) << log;
  EXPECT_TRUE(fs::exists(dir + "/run/model.bin"));
  ExpectEveryLineOnce(dir);
  ExpectExportIsTheModel(dir + "/run/export", dir + "/run/model.bin", /*with_deltas=*/true);
}

TEST_F(StreamingTest, EveryLineOnceThroughAPsKilledAndTheClusterBackAtItsCheckpoint) {
  LocalCluster cluster(2, 2, MakeTestDir("StreamingTest-ps"));
  const std::string dir = cluster.dir();
  fs::create_directories(dir + "/in");
  for (int k = 0; k < 4; ++k) Publish(dir + "/in", k);
  // Checkpoints every 100 steps (a file is 30): the last one before the
  // ps is lost holds some files whole, one in part, and misses the rest.
  std::vector<std::string> flags = Flags(dir);
  std::replace(flags.begin(), flags.end(), std::string("--checkpoint_every_secs=1"),
               std::string("--checkpoint_every_steps=100"));
  const std::vector<std::string> ps_flags = {"--checkpoint_dir=" + dir + "/ckpt"};
  for (int k = 0; k < 2; ++k) cluster.StartTask("ps", k, ps_flags);
  cluster.StartTask("chief", 0, flags);
  for (int w = 0; w < 2; ++w) cluster.StartTask("worker", w, flags);
  auto chief = [&] { return cluster.task("chief").Log(); };
  ASSERT_TRUE(WaitFor(chief, "stream caught up: 4 files", 1, seconds(120))) << chief();
  for (int k = 4; k < 8; ++k) Publish(dir + "/in", k);
  ASSERT_TRUE(WaitFor(chief, "stream caught up: 8 files", 1, seconds(120))) << chief();
  // ps:1 lost before the next checkpoint: every shard goes back to the one
  // saved, which lacks files trained since; they are trained again there.
  cluster.task("ps", 1).Signal(SIGKILL);
  cluster.task("ps", 1).Wait(seconds(10));
  cluster.StartTask("ps", 1, ps_flags);
  for (int k = 8; k < kFiles; ++k) Publish(dir + "/in", k);
  ASSERT_TRUE(
      WaitFor(chief, "stream caught up: " + std::to_string(kFiles) + " files", 1, seconds(240)))
      << chief();
  EXPECT_NE(chief().find("restored checkpoint"), std::string::npos) << chief();
  cluster.task("chief").Signal(SIGTERM);
  const std::vector<TaskExit> exits = cluster.WaitAll(seconds(120));
  for (const TaskExit& e : exits) {
    EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << chief();
  }
  EXPECT_NE(chief().find("exported a delta"), std::string::npos) << chief();
  ExpectEveryLineOnce(dir);
  ExpectExportIsTheModel(dir + "/run/export", dir + "/run/model.bin", /*with_deltas=*/false);
}

}  // namespace
}  // namespace pst
