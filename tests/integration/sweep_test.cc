// scripts/sweep.sh on a small synthetic data set: a --quick grid of three
// jobs, two at a time, on one shared ps cluster (a container per job); the
// table ranks them by validation accuracy, the top three models are copied
// and ensembled; bad input is refused; a failed job or a lost ps fails the
// sweep; no process of the sweep is left behind, also when it is interrupted.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Whether the chief whose log this is opened training within 30 s.
bool WaitForTraining(const std::string& chief_log) {
  for (int i = 0; i < 300; ++i) {
    if (ReadFile(chief_log).find("training opened") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class SweepTest : public SyntheticDataTest {
 protected:
  // Starts scripts/sweep.sh --quick into this test's results folder.
  std::unique_ptr<ChildProcess> StartSweep(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/bin/bash", std::string(std::getenv("PST_SOURCE_DIR")) + "/scripts/sweep.sh", "--quick",
        "--results=" + results_, "--data_dir=" + data_dir()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto script = ChildProcess::Start(argv, TestPath(".log"));
    CHECK(script.ok());
    return std::move(script).value();
  }
  const std::string results_ = TestPath("-results");
};

TEST_F(SweepTest, RanksTheJobsAndEnsemblesTheTopThree) {
  // Rates from far too small to fine, out of order: the ranking is not the
  // jobs' order.
  auto script = StartSweep({"--parallel=2", "--grid=learning_rate=0.001,0.3,0.0001"});
  ASSERT_EQ(script->Wait(std::chrono::seconds(120)), 0) << script->Log();

  // rank | job | flags | validation accuracy | test accuracy | global step | wall s
  const auto rows = TableRows(results_ + "/table.md");
  ASSERT_EQ(rows.size(), 3u) << ReadFile(results_ + "/table.md");
  double previous = 1.0;
  for (size_t r = 0; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), 7u);
    EXPECT_EQ(rows[r][0], std::to_string(r + 1));
    EXPECT_NE(rows[r][2].find("learning_rate="), std::string::npos) << rows[r][2];
    const double validation = std::stod(rows[r][3]), test = std::stod(rows[r][4]);
    EXPECT_LE(validation, previous) << "not sorted by validation accuracy";
    previous = validation;
    EXPECT_GE(test, 0.0);
    EXPECT_LE(test, 1.0);
    EXPECT_EQ(rows[r][5], "150");
    // The K-th best job's model is topK.bin.
    const std::string job = results_ + "/jobs/" + rows[r][1];
    const std::string model = ReadFile(job + "/model.bin");
    EXPECT_FALSE(model.empty()) << job;
    EXPECT_EQ(ReadFile(results_ + "/top" + std::to_string(r + 1) + ".bin"), model) << job;
    // Every job ran in its own container on the sweep's ps, not on ps of its own.
    const std::string flags = ReadFile(job + "/cluster.flags");
    EXPECT_NE(flags.find("--container=" + rows[r][1] + "\n"), std::string::npos) << flags;
    EXPECT_NE(flags.find(ReadLines(results_ + "/ps/cluster.flags")[0] + "\n"), std::string::npos);
    EXPECT_FALSE(fs::exists(job + "/ps-0.log"));
  }
  // 0.3 learns the synthetic set, 0.001 half-way, 0.0001 barely.
  EXPECT_EQ(rows[0][1] + " " + rows[1][1] + " " + rows[2][1], "sweep-02 sweep-01 sweep-03");
  EXPECT_TRUE(IsPng(results_ + "/curves.png"));
  const std::string ensemble = ReadFile(results_ + "/ensemble.md");
  EXPECT_NE(ensemble.find("\nEnsemble-Validation-Accuracy: "), std::string::npos) << ensemble;
  EXPECT_NE(ensemble.find("\nEnsemble-Test-Accuracy: "), std::string::npos) << ensemble;
  EXPECT_NE(script->Log().find("Ensemble-Test-Accuracy: "), std::string::npos);  // printed too
  EXPECT_TRUE(ProcessesMentioning(results_).empty());
}

TEST_F(SweepTest, RefusesBadInput) {
  for (const auto& [arg, message] : std::vector<std::pair<std::string, std::string>>{
           {"--grid=learning_rate", "'learning_rate' is not FLAG=V1,V2,..."},
           {"--grid=learning_rate=0.1,,0.3", "is not FLAG=V1,V2,..."},
           {"--grid=learning_rate=0.1,0.3", "has 2 point(s)"},
           {"--parallel=0", "--parallel must be a positive integer"},
           {"--bogus", "unknown argument '--bogus'"}}) {
    auto script = StartSweep({arg});
    EXPECT_EQ(script->Wait(std::chrono::seconds(30)), 2) << arg << "\n" << script->Log();
    EXPECT_NE(script->Log().find(message), std::string::npos) << arg << "\n" << script->Log();
  }
  EXPECT_FALSE(fs::exists(results_ + "/jobs"));
}

TEST_F(SweepTest, AFailedJobFailsTheSweepAndIsNamed) {
  // batch_size=0 is refused by every task of sweep-02 and sweep-04; the one
  // whose launcher ends first stops the sweep (under load, either may).
  auto script = StartSweep({"--grid=learning_rate=0.1,0.3 batch_size=50,0"});
  EXPECT_EQ(script->Wait(std::chrono::seconds(120)), 1) << script->Log();
  EXPECT_TRUE(std::regex_search(
      script->Log(), std::regex(R"(job sweep-0(2 \(--learning_rate=0\.1|4 \(--learning_rate=0\.3) )"
                                R"(--batch_size=0\) failed)")))
      << script->Log();
  EXPECT_FALSE(fs::exists(results_ + "/table.md"));
  EXPECT_TRUE(ProcessesMentioning(results_).empty());
}

TEST_F(SweepTest, ALostPsFailsTheSweep) {
  auto script = StartSweep({"--train_steps=1000000"});
  ASSERT_TRUE(WaitForTraining(results_ + "/jobs/sweep-01/chief.log")) << script->Log();
  const std::vector<int> ps = ProcessesMentioning(results_ + "/ps/cluster.flags");
  ASSERT_EQ(ps.size(), 2u);
  ASSERT_EQ(::kill(ps[0], SIGKILL), 0);
  EXPECT_EQ(script->Wait(std::chrono::seconds(60)), 1) << script->Log();
  EXPECT_NE(script->Log().find(" exited: "), std::string::npos) << script->Log();
  EXPECT_TRUE(ProcessesMentioning(results_).empty());
}

TEST_F(SweepTest, AnInterruptedSweepStopsEveryProcess) {
  auto script = StartSweep({"--train_steps=1000000"});
  ASSERT_TRUE(WaitForTraining(results_ + "/jobs/sweep-02/chief.log")) << script->Log();
  ASSERT_FALSE(ProcessesMentioning(results_).empty());
  script->Signal(SIGINT);
  EXPECT_EQ(script->Wait(std::chrono::seconds(60)), 130) << script->Log();
  EXPECT_TRUE(ProcessesMentioning(results_).empty());
}

}  // namespace
}  // namespace pst
