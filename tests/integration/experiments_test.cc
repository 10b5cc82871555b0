// The experiment scripts users run, in their --quick form on a small
// synthetic data set: each writes a table with one row per configuration
// and its PNG plots; the chief writes TensorBoard event files.
#include <filesystem>

#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

class ExperimentsTest : public SyntheticDataTest {
 protected:
  // Runs scripts/NAME --quick; returns its results folder.
  std::string RunScript(const std::string& name) {
    const std::string results = TestPath("-results");
    auto script = ChildProcess::Start(
        {"/bin/bash", std::string(std::getenv("PST_SOURCE_DIR")) + "/scripts/" + name, "--quick",
         "--results=" + results, "--data_dir=" + data_dir()},
        TestPath(".log"));
    CHECK(script.ok());
    EXPECT_EQ((*script)->Wait(std::chrono::seconds(300)), 0) << (*script)->Log();
    return results;
  }
};

TEST_F(ExperimentsTest, SyncVsAsyncWritesItsTableAndPlot) {
  const std::string results = RunScript("sync_vs_async.sh");
  ASSERT_EQ(TableRows(results + "/table.md").size(), 12u);
  EXPECT_TRUE(IsPng(results + "/accuracy.png"));
  EXPECT_NE(ReadLines(results + "/table.md")[0].find("time to 97%"), std::string::npos);
}

TEST_F(ExperimentsTest, TuneShardsWritesItsTablePlotAndRecommendation) {
  const std::string results = RunScript("tune_shards.sh");
  // 2 ps counts x 2 partitionings x 2 placements, and 2 bfloat16 runs.
  ASSERT_EQ(TableRows(results + "/table.md").size(), 10u);
  EXPECT_TRUE(IsPng(results + "/shards.png"));
  // Per ps count, bfloat16 against float32: about half the bytes a step.
  ASSERT_EQ(TableRows(results + "/wire.md").size(), 2u);
  for (const std::string& row : ReadLines(results + "/wire.md")) {
    if (row.rfind("| ps", 0) != 0) continue;
    const double bytes_ratio = std::stod(row.substr(row.rfind("| ", row.size() - 3) + 2));
    EXPECT_GT(bytes_ratio, 0.4) << row;
    EXPECT_LT(bytes_ratio, 0.6) << row;
  }
  const auto recommendation = ReadLines(results + "/recommendation.txt");
  ASSERT_EQ(recommendation.size(), 1u);
  EXPECT_EQ(recommendation[0].rfind("recommendation: ps", 0), 0u) << recommendation[0];
}

// scripts/chaos.sh, one async chaos run with a kill every 1 to 2 s (bounded
// to 40 s): the undisturbed baseline finishes with no lost update, the chaos
// run's kills are recorded, the summary line is written, and no process of
// the benchmark is left behind.
TEST_F(ExperimentsTest, ChaosKillsTasksAndWritesItsSummary) {
  const std::string out = TestPath("-chaos");
  auto script = ChildProcess::Start(
      {"/bin/bash", std::string(std::getenv("PST_SOURCE_DIR")) + "/scripts/chaos.sh", "--runs=1",
       "--modes=async", "--train_steps=3000", "--model=mlp", "--kill_every=1:2", "--stall_after=10",
       "--stop_after=20", "--run_timeout=40", "--out=" + out,
       // Slow enough (about 5 s undisturbed) that the first kill lands.
       "--data_dir=" + data_dir(), "--", "--batch_size=50", "--simulated_delay_ms=5"},
      TestPath(".log"));
  CHECK(script.ok());
  ASSERT_EQ((*script)->Wait(std::chrono::seconds(150)), 0) << (*script)->Log();
  const auto summary = ReadLines(out + "/summary.md");
  ASSERT_FALSE(summary.empty());
  EXPECT_EQ(summary.back().rfind("async: finished ", 0), 0u) << summary.back();
  EXPECT_NE(summary.back().find("/1, kills "), std::string::npos) << summary.back();
  bool baseline_clean = false;
  for (const std::string& line : summary) {
    // run | finished | launcher exit | kills | restarts | restores | stalls |
    // Global-Step | lost updates (uncounted) | ...
    baseline_clean |= line.rfind("| baseline | yes | 0 | 0 (0/0/0) | 0 | 0 | 0 | ", 0) == 0 &&
                      line.find(" | 0 (0) | ") != std::string::npos;
  }
  EXPECT_TRUE(baseline_clean) << (*script)->Log();
  EXPECT_FALSE(ReadLines(out + "/async/run-01/kills.log").empty());
  EXPECT_TRUE(ProcessesMentioning(out).empty());
}

TEST_F(ExperimentsTest, ChiefWritesTensorBoardEvents) {
  LocalCluster cluster(1, 1, TestDir());
  const std::string logdir = cluster.dir() + "/tb";
  cluster.StartAll({"--data_dir=" + data_dir(), "--model=mlp", "--batch_size=50",
                    "--train_steps=100", "--eval_every_steps=50", "--logdir=" + logdir});
  for (const TaskExit& e : cluster.WaitAll(std::chrono::seconds(120))) EXPECT_EQ(e.code, 0);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(logdir)) {  // in the run's sub-folder
    if (!entry.is_regular_file()) continue;
    files += entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    EXPECT_GT(fs::file_size(entry.path()), 100u);
  }
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace pst
