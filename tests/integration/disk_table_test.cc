// Dynamic tables on disk (--embedding_storage=disk:DIR) on a real cluster:
// the generated click problem trained with a RAM cache of 500 rows per
// table and tens of thousands of keys per ps, checkpointed as RocksDB
// checkpoints (hard links) beside the parts; a ps SIGKILLed and restarted
// gets its rows back from them and training reaches the Bayes AUC.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "common/tensor_file.h"
#include "tests/integration/child_process.h"
#include "tests/integration/export_check.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(DiskTableTest, AKilledPsGetsItsRowsBackFromTheRocksDbCheckpoint) {
  const std::string data_dir = MakeTestDir("DiskTableTest-data");
  ASSERT_EQ(MakeCtrProblem(data_dir, {"--train_examples=200000", "--test_examples=20000",
                                      "--seed=1", "--linear", "--lr_epochs=0"}),
            "");
  const std::optional<double> bayes = ProblemNumber(data_dir, "bayes_test_auc");
  ASSERT_TRUE(bayes.has_value());
  const double bayes_auc = *bayes;

  LocalCluster cluster(2, 2, MakeTestDir("DiskTableTest-run"));
  const std::string checkpoints = cluster.dir() + "/checkpoints";
  const std::vector<std::string> flags = {"--dataset=criteo",
                                          "--train_file=" + data_dir + "/train.txt",
                                          "--test_file=" + data_dir + "/test.txt",
                                          "--model=wide_deep",
                                          "--optimizer=adagrad",
                                          "--learning_rate=0.1",
                                          "--batch_size=256",
                                          "--train_steps=2000",
                                          "--eval_every_steps=500",
                                          "--run_dir=" + cluster.dir(),
                                          "--embedding_capacity=200000",
                                          "--embedding_storage=disk:" + cluster.dir() + "/tables",
                                          "--embedding_cache_rows=500",
                                          "--checkpoint_dir=" + checkpoints,
                                          "--checkpoint_every_steps=300",
                                          "--export_every_secs=1",
                                          "--rpc_timeout_ms=2000",
                                          "--heartbeat_timeout_ms=3000",
                                          "--log_every_steps=20"};
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  for (int i = 0; i < 6000 && chief.Log().find(" saved at step ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_NE(chief.Log().find(" saved at step "), std::string::npos) << chief.Log();
  cluster.task("ps", 1).Signal(SIGKILL);
  for (int i = 0; i < 1000 && chief.Log().find("ps:1 declared dead") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ChildProcess& restarted = cluster.StartTask("ps", 1, flags);
  const std::vector<TaskExit> exits = cluster.WaitAll(seconds(400));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << chief.Log();
  const std::string log = chief.Log();
  EXPECT_NE(log.find("training resumes at global step"), std::string::npos) << log;

  // The restarted ps reopened its rows from the checkpoint: far more than
  // its cache holds.
  const std::string ps_log = restarted.Log();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      ps_log, m, std::regex("table 'deep/embedding' holds (\\d+) rows after the restore")))
      << ps_log;
  EXPECT_GT(std::stoi(m[1].str()), 5000) << ps_log;
  EXPECT_NE(ps_log.find("on disk in " + cluster.dir() + "/tables"), std::string::npos) << ps_log;

  // Every checkpoint holds a RocksDB folder per ps and table beside the
  // parts, and a part only the table's small state, not its rows.
  int rocksdb_folders = 0;
  for (const auto& ckpt : fs::directory_iterator(checkpoints)) {
    if (ckpt.path().filename().string().rfind("ckpt-", 0) != 0) continue;
    for (const auto& entry : fs::directory_iterator(ckpt.path())) {
      if (entry.path().extension() == ".rocksdb") ++rocksdb_folders;
    }
    StatusOr<NamedTensors> part = ReadTensorFile(ckpt.path().string() + "/ps-0.part");
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    bool has_state = false;
    for (const auto& [name, t] : *part) {
      EXPECT_NE(name, "deep/embedding@ids");
      if (name == "deep/embedding@disk_rows") has_state = t.i64()[0] > 5000;
    }
    EXPECT_TRUE(has_state) << ckpt.path();
  }
  EXPECT_GE(rocksdb_folders, 2);
  EXPECT_GE(ReportValue(log, "Test-AUC: ").value_or(0), bayes_auc - 0.02) << log;

  // The tables on disk are listed into model.bin and followed by the
  // export: predict gives the chief's figures, and base + deltas are
  // model.bin.
  auto predict =
      ChildProcess::Start({BinDir() + "/predict", "--model_file=" + cluster.dir() + "/model.bin",
                           "--dataset=criteo", "--test_file=" + data_dir + "/test.txt"},
                          cluster.dir() + "/predict.log");
  ASSERT_TRUE(predict.ok()) << predict.status().ToString();
  ASSERT_EQ((*predict)->Wait(seconds(120)), 0) << (*predict)->Log();
  for (const char* key : {"Test-AUC: ", "Test-LogLoss: "}) {
    EXPECT_EQ(ReportValue((*predict)->Log(), key), ReportValue(log, key)) << (*predict)->Log();
  }
  ExpectExportIsTheModel(cluster.dir() + "/export", cluster.dir() + "/model.bin",
                         /*with_deltas=*/false);
}

}  // namespace
}  // namespace pst
