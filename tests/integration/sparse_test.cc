// Click models on a real cluster: the generated click problem
// (examples/make_ctr_problem.py --linear) trained by ps, worker and chief processes
// with embedding tables on the ps, async and sync, to within 0.02 of the
// generator's Bayes-optimal test AUC; a fixed table too large to pull whole
// moving as many bytes per step as a small one; a dynamic table that never
// holds more rows than its capacity; a killed ps whose rows come back from
// the checkpoint, or, with --ps_replicas=2, from its shards' backups; a
// checkpoint of 2 ps whose table rows go, one by one, to 3.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "common/tensor_file.h"
#include "tests/integration/child_process.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SparseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_dir_ = new std::string(MakeTestDir("SparseTest-data"));
    ASSERT_EQ(MakeCtrProblem(*data_dir_, {"--train_examples=200000", "--test_examples=20000",
                                          "--seed=1", "--linear", "--lr_epochs=0"}),
              "");
    const std::optional<double> bayes = ProblemNumber(*data_dir_, "bayes_test_auc");
    ASSERT_TRUE(bayes.has_value());
    bayes_auc_ = *bayes;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*data_dir_);
    delete data_dir_;
  }
  static std::string TestDir() {
    return MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  static std::vector<std::string> Flags(const std::string& run_dir, int train_steps) {
    return {"--dataset=criteo",
            "--train_file=" + *data_dir_ + "/train.txt",
            "--test_file=" + *data_dir_ + "/test.txt",
            "--model=wide_deep",
            "--optimizer=adagrad",
            "--learning_rate=0.1",
            "--batch_size=256",
            "--train_steps=" + std::to_string(train_steps),
            "--eval_every_steps=500",
            "--run_dir=" + run_dir};
  }
  // Runs a whole cluster with `flags`; every task must exit 0. Returns the
  // chief's log.
  static std::string Train(LocalCluster& cluster, const std::vector<std::string>& flags) {
    cluster.StartAll(flags);
    const std::vector<TaskExit> exits = cluster.WaitAll(seconds(400));
    for (const TaskExit& e : exits) {
      EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << cluster.task("chief").Log();
    }
    return cluster.task("chief").Log();
  }
  // The values of `key` in the run's metrics.jsonl, one per evaluation.
  static std::vector<double> Metric(const std::string& run_dir, const std::string& key) {
    std::vector<double> values;
    const std::regex pattern("\"" + key + "\": ([-0-9.e]+)");
    for (const std::string& line : ReadLines(run_dir + "/metrics.jsonl")) {
      std::smatch m;
      if (std::regex_search(line, m, pattern)) values.push_back(std::stod(m[1].str()));
    }
    return values;
  }
  // model.bin of the run in `run_dir` carries the tables: predict on the
  // test file (with `flags`) gives the chief's figures (its log `log`).
  static void ExpectPredictGivesTheChiefsFigures(const std::string& run_dir, const std::string& log,
                                                 const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {BinDir() + "/predict",
                                     "--model_file=" + run_dir + "/model.bin", "--dataset=criteo",
                                     "--test_file=" + *data_dir_ + "/test.txt"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto predict = ChildProcess::Start(argv, run_dir + "/predict.log");
    ASSERT_TRUE(predict.ok()) << predict.status().ToString();
    ASSERT_EQ((*predict)->Wait(seconds(120)), 0) << (*predict)->Log();
    for (const char* key : {"Test-AUC: ", "Test-LogLoss: "}) {
      EXPECT_EQ(ReportValue((*predict)->Log(), key), ReportValue(log, key)) << (*predict)->Log();
    }
  }
  static void ExpectNearBayes(const std::string& log) {
    const double auc = ReportValue(log, "Test-AUC: ").value_or(0);
    EXPECT_GE(auc, bayes_auc_ - 0.02) << "Bayes-optimal AUC " << bayes_auc_ << "\n" << log;
    EXPECT_GT(ReportValue(log, "Test-LogLoss: ").value_or(0), 0) << log;
  }

  static std::string* data_dir_;
  static double bayes_auc_;
};

std::string* SparseTest::data_dir_ = nullptr;
double SparseTest::bayes_auc_ = 0;

TEST_F(SparseTest, AsyncTwoPsTwoWorkersReachTheBayesAuc) {
  LocalCluster cluster(2, 2, TestDir());
  std::vector<std::string> flags = Flags(cluster.dir(), 4000);
  flags.push_back("--embedding_rows=100000");
  const std::string log = Train(cluster, flags);
  ExpectNearBayes(log);
  // Placement prints every table's shards.
  EXPECT_NE(log.find("deep/embedding -> every ps, row id mod 2 [100000 x 8], rows per ps: 50000 "
                     "50000"),
            std::string::npos)
      << log;
  // model.bin carries the tables: predict gives the chief's figures.
  ExpectPredictGivesTheChiefsFigures(cluster.dir(), log, {});
}

TEST_F(SparseTest, SyncTwoPsTwoWorkersReachTheBayesAuc) {
  LocalCluster cluster(2, 2, TestDir());
  std::vector<std::string> flags = Flags(cluster.dir(), 2500);
  flags.insert(flags.end(), {"--mode=sync", "--replicas_to_aggregate=2", "--embedding_rows=100000",
                             "--learning_rate=0.15"});
  const std::string log = Train(cluster, flags);
  ExpectNearBayes(log);
  EXPECT_EQ(ReportValue(log, "Global-Step: ").value_or(0), 2500) << log;
}

// --features=examples/criteo.features: today's model as a feature file
// (13 log1p numerics, 26 categorical fields in one shared table of
// 1,000,000 rows, the 13 integers bucketized in 88 rows each) trains as well, and predict with the
// same file gives the chief's figures.
TEST_F(SparseTest, TheCriteoFeatureFileReachesTheBayesAuc) {
  LocalCluster cluster(2, 2, TestDir());
  const std::string features =
      std::string(std::getenv("PST_SOURCE_DIR")) + "/examples/criteo.features";
  std::vector<std::string> flags = Flags(cluster.dir(), 4000);
  flags.push_back("--features=" + features);
  const std::string log = Train(cluster, flags);
  ExpectNearBayes(log);
  EXPECT_NE(log.find("[1001144 x 8]"), std::string::npos) << log;
  ExpectPredictGivesTheChiefsFigures(cluster.dir(), log, {"--features=" + features});
}

// Fields of two dims: C1..C13 in a 4-dim table of their own, C14..C26 in
// wide_deep's 8 dims. Each dim's physical table holds its fields' key range
// only; the run trains as well, and predict (model.bin keeps the dims and
// ranges) gives the chief's figures.
TEST_F(SparseTest, FieldsOfTwoDimsTrainInATableEachAndPredictAgrees) {
  LocalCluster cluster(2, 2, TestDir());
  const std::string features = cluster.dir() + "/two_dims.features";
  {
    std::ofstream out(features);
    for (int i = 1; i <= 13; ++i) out << "I" << i << " numeric I" << i << " log1p\n";
    for (int c = 1; c <= 26; ++c) {
      out << "C" << c << " categorical C" << c
          << (c <= 13 ? " buckets=200000 table=small dim=4\n" : " buckets=300000 table=large\n");
    }
  }
  std::vector<std::string> flags = Flags(cluster.dir(), 4000);
  flags.push_back("--features=" + features);
  const std::string log = Train(cluster, flags);
  ExpectNearBayes(log);
  EXPECT_NE(log.find("deep/embedding -> every ps, row id mod 2 [200000 x 4]"), std::string::npos)
      << log;
  EXPECT_NE(log.find("deep/embedding_dim8 -> every ps, row id mod 2 [300000 x 8]"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("wide/weights -> every ps, row id mod 2 [500000 x 1]"), std::string::npos)
      << log;
  ExpectPredictGivesTheChiefsFigures(cluster.dir(), log, {"--features=" + features});
}

// 40 million rows: 1.3 GB of values were it pulled whole, every step. By
// row it moves what a 100,000-row table does (a few more distinct rows:
// fewer hash collisions).
TEST_F(SparseTest, ATableTooLargeToPullMovesAsManyBytesPerStepAsASmallOne) {
  std::vector<double> bytes_per_step;
  for (const char* rows : {"100000", "40000000"}) {
    SCOPED_TRACE(std::string("rows ") + rows);
    LocalCluster cluster(
        2, 1,
        MakeTestDir(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                    "-" + rows));
    std::vector<std::string> flags = Flags(cluster.dir(), 600);
    flags.push_back(std::string("--embedding_rows=") + rows);
    const std::string log = Train(cluster, flags);
    const std::vector<double> steps = Metric(cluster.dir(), "step");
    const std::vector<double> in0 = Metric(cluster.dir(), "ps0_bytes_in");
    const std::vector<double> in1 = Metric(cluster.dir(), "ps1_bytes_in");
    ASSERT_FALSE(steps.empty()) << log;
    ASSERT_EQ(in0.size(), steps.size());
    bytes_per_step.push_back((in0.back() + in1.back()) / steps.back());
    EXPECT_GE(ReportValue(log, "Test-AUC: ").value_or(0), 0.7) << log;
    // The 40-million-row table's model.bin is 1.4 GB: gone with the run,
    // or repeated runs fill the disk.
    std::filesystem::remove_all(cluster.dir());
  }
  EXPECT_NEAR(bytes_per_step[1] / bytes_per_step[0], 1.0, 0.05);
}

TEST_F(SparseTest, ADynamicTableNeverHoldsMoreRowsThanItsCapacity) {
  LocalCluster cluster(2, 2, TestDir());
  std::vector<std::string> flags = Flags(cluster.dir(), 1500);
  flags.insert(flags.end(),
               {"--embedding_capacity=3000", "--embedding_min_count=2", "--eval_every_steps=250"});
  const std::string log = Train(cluster, flags);
  for (const char* shard : {"ps0", "ps1"}) {
    const std::string table = std::string(shard) + "_table_deep/embedding_";
    const std::vector<double> rows = Metric(cluster.dir(), table + "rows");
    const std::vector<double> evicted = Metric(cluster.dir(), table + "evicted");
    const std::vector<double> refused = Metric(cluster.dir(), table + "refused");
    ASSERT_GE(rows.size(), 5u) << log;
    for (double r : rows) EXPECT_LE(r, 3000) << shard;
    EXPECT_EQ(rows.back(), 3000) << shard << ": full";
    EXPECT_GT(evicted.back(), 0) << shard;
    EXPECT_GT(refused.back(), 0) << shard << ": keys seen once are not admitted";
  }
  EXPECT_NE(log.find("table 'deep/embedding' holds 3000 rows"), std::string::npos) << log;
  // Few rows for many keys: it learns, short of the Bayes AUC.
  EXPECT_GE(ReportValue(log, "Test-AUC: ").value_or(0), 0.7) << log;
  // model.bin holds the rows and keys: predict gives the chief's figures
  // (the chief's evaluation created and evicted no row).
  ExpectPredictGivesTheChiefsFigures(cluster.dir(), log, {});
}

TEST_F(SparseTest, AKilledPsGetsItsRowsBackFromTheCheckpoint) {
  LocalCluster cluster(2, 2, TestDir());
  const std::string checkpoints = cluster.dir() + "/checkpoints";
  std::vector<std::string> flags = Flags(cluster.dir(), 2000);
  flags.insert(flags.end(), {"--embedding_capacity=200000", "--checkpoint_dir=" + checkpoints,
                             "--checkpoint_every_steps=300", "--rpc_timeout_ms=2000",
                             "--heartbeat_timeout_ms=3000", "--log_every_steps=20"});
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
  // The restarted ps loaded its rows of both tables: thousands of keys.
  std::smatch m;
  const std::string ps_log = restarted.Log();
  ASSERT_TRUE(std::regex_search(ps_log, m,
                                std::regex("table 'deep/embedding' holds (\\d+) rows "
                                           "after the restore")))
      << ps_log;
  EXPECT_GT(std::stoi(m[1].str()), 1000) << ps_log;
  ExpectNearBayes(log);
}

// Trained on 2 ps, resumed on 3 (a dynamic table, which saves every row it
// holds): the chief cuts the final checkpoint for 3 ps, each ps restores the
// rows whose id mod 3 is its index, none is lost, and training goes on to
// the Bayes AUC.
TEST_F(SparseTest, ATableCheckpointedOnTwoPsIsRestoredRowByRowOnThree) {
  const std::string dir = TestDir(), checkpoints = dir + "/checkpoints";
  auto flags = [&](const std::string& run_dir, int steps) {
    std::vector<std::string> f = Flags(run_dir, steps);
    f.insert(f.end(), {"--embedding_capacity=200000", "--checkpoint_dir=" + checkpoints,
                       "--checkpoint_every_steps=0"});
    return f;
  };
  int64_t rows_saved = 0;
  std::string newest;
  std::filesystem::create_directories(dir + "/two");
  std::filesystem::create_directories(dir + "/three");
  {
    LocalCluster two(2, 2, dir + "/two");
    Train(two, flags(two.dir(), 2500));
    for (const auto& entry : std::filesystem::directory_iterator(checkpoints)) {
      if (entry.path().filename().string().rfind("ckpt-", 0) == 0) newest = entry.path().string();
    }
    ASSERT_FALSE(newest.empty());  // the final one: async may pass step 2500
    for (const char* part : {"/ps-0.part", "/ps-1.part"}) {
      StatusOr<NamedTensors> tensors = ReadTensorFile(newest + part);
      ASSERT_TRUE(tensors.ok()) << tensors.status().ToString();
      for (const auto& [name, t] : *tensors) {
        if (name == "deep/embedding@ids") rows_saved += t.num_elements();
      }
    }
  }
  ASSERT_GT(rows_saved, 10000);
  LocalCluster three(3, 2, dir + "/three");
  const std::string log = Train(three, flags(three.dir(), 4000));
  const std::string name = std::filesystem::path(newest).filename().string();
  EXPECT_NE(log.find("resharded checkpoint " + name + " from 2 ps to 3"), std::string::npos) << log;
  int64_t rows_restored = 0;
  for (int k = 0; k < 3; ++k) {
    std::smatch m;
    const std::string ps_log = three.task("ps", k).Log();
    ASSERT_TRUE(std::regex_search(
        ps_log, m, std::regex("table 'deep/embedding' holds (\\d+) rows after the restore")))
        << ps_log;
    EXPECT_GT(std::stoll(m[1].str()), rows_saved / 4) << "ps:" << k;
    rows_restored += std::stoll(m[1].str());
  }
  EXPECT_EQ(rows_restored, rows_saved);
  ExpectNearBayes(log);
}

// --ps_replicas=2 (3 ps, no --checkpoint_dir): a ps SIGKILLed in training
// costs no row and no rollback. Its shards' backups, which the primaries
// shipped every table's rows and their optimizer state, take over, and the
// model still reaches the Bayes-optimal AUC.
TEST_F(SparseTest, AKilledPsLosesNoRowWithReplicatedShards) {
  LocalCluster cluster(3, 2, TestDir());
  std::vector<std::string> flags = Flags(cluster.dir(), 2000);
  flags.insert(flags.end(),
               {"--embedding_capacity=200000", "--ps_replicas=2", "--rpc_timeout_ms=5000",
                "--heartbeat_timeout_ms=3000", "--log_every_steps=20"});
  cluster.StartAll(flags);
  ChildProcess& chief = cluster.task("chief");
  for (int i = 0; i < 6000 && ReportValue(chief.Log(), "Step: ").value_or(0) < 600; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_GE(ReportValue(chief.Log(), "Step: ").value_or(0), 600) << chief.Log();
  cluster.task("ps", 1).Signal(SIGKILL);
  const std::vector<TaskExit> exits = cluster.WaitAll(seconds(400));
  for (const TaskExit& e : exits) {
    if (e.name == "ps-1") continue;  // killed
    EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << chief.Log();
  }
  const std::string log = chief.Log();
  EXPECT_NE(log.find("ps:1 lost"), std::string::npos) << log;
  EXPECT_NE(log.find("shard 1 epoch 2: primary ps:2"), std::string::npos) << log;
  EXPECT_EQ(log.find("training resumes at global step"), std::string::npos) << log;
  ExpectNearBayes(log);
}

}  // namespace
}  // namespace pst
