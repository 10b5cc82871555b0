// The chief's TensorBoard event files, read with TensorBoard's own reader:
// training scalars every --log_every_steps, one sub-folder per run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

struct Point {
  int64_t step;
  double value;
};
using Scalars = std::map<std::string, std::vector<Point>>;  // by tag, in step order

// Every scalar of a run's folder, read by scripts/read_events.py.
Scalars ReadRun(const std::string& python, const std::string& run_folder) {
  const std::string out = run_folder + ".txt";
  const std::string command = "'" + python + "' '" + std::getenv("PST_SOURCE_DIR") +
                              "/scripts/read_events.py' '" + run_folder + "' > '" + out + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  Scalars scalars;
  std::ifstream in(out);
  std::string tag;
  Point p;
  while (in >> tag >> p.step >> p.value) scalars[tag].push_back(p);
  return scalars;
}

class TensorBoardTest : public SyntheticDataTest {};

TEST_F(TensorBoardTest, TrainingScalarsEveryLogStepAndOneSubFolderPerRun) {
  std::string why_not;
  const std::string python = TestPython("tensorboard", &why_not);
  if (python.empty()) GTEST_SKIP() << why_not;
  ASSERT_NE(std::getenv("PST_SOURCE_DIR"), nullptr) << "run through ctest";

  constexpr int kTrainSteps = 300, kLogEvery = 20;
  const std::string dir = TestDir();
  const std::string logdir = dir + "/tb";  // shared by both runs
  std::map<std::string, std::string> chief_logs;
  for (const std::string run : {"run-a", "run-b"}) {
    fs::create_directories(dir + "/" + run);
    LocalCluster cluster(1, 2, dir + "/" + run);
    cluster.StartAll({"--data_dir=" + data_dir(), "--model=mlp", "--batch_size=50",
                      "--train_steps=" + std::to_string(kTrainSteps),
                      "--log_every_steps=" + std::to_string(kLogEvery), "--eval_every_steps=100",
                      "--simulated_delay_ms=2", "--logdir=" + logdir,
                      "--run_dir=" + cluster.dir()});
    const std::vector<TaskExit> exits = cluster.WaitAll(std::chrono::seconds(300));
    for (const TaskExit& e : exits) ASSERT_EQ(e.code, 0) << DescribeExits(exits);
    chief_logs[run] = cluster.task("chief").Log();
  }

  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(logdir)) {
    if (entry.is_directory()) folders.insert(entry.path().filename().string());
  }
  EXPECT_EQ(folders, (std::set<std::string>{"run-a", "run-b"}));

  for (const auto& [run, log] : chief_logs) {
    SCOPED_TRACE(run);
    const Scalars scalars = ReadRun(python, logdir + "/" + run);
    std::set<std::string> tags;
    for (const auto& [tag, points] : scalars) tags.insert(tag);
    EXPECT_EQ(tags, (std::set<std::string>{"loss", "steps_per_sec", "staleness_mean", "test_loss",
                                           "test_accuracy", "gradients_dropped"}));

    // One loss point with each Step line, at most one per --log_every_steps
    // interval (the chief polls the step, so a point may land a little past
    // the interval's start), and the last at the end of training.
    int step_lines = 0;
    for (const std::string& line : ReadLines(dir + "/" + run + "/chief-0.log")) {
      step_lines += line.rfind("Step: ", 0) == 0;
    }
    const std::vector<Point>& loss =
        scalars.count("loss") ? scalars.at("loss") : std::vector<Point>{};
    EXPECT_EQ(static_cast<int>(loss.size()), step_lines) << log;
    EXPECT_GE(static_cast<int>(loss.size()), kTrainSteps / kLogEvery / 2) << log;
    std::set<int64_t> intervals;
    for (const Point& p : loss) {
      EXPECT_TRUE(intervals.insert(p.step / kLogEvery).second) << "two points at step " << p.step;
    }
    if (!loss.empty()) EXPECT_GE(loss.back().step, kTrainSteps);
    EXPECT_EQ(scalars.count("steps_per_sec") ? scalars.at("steps_per_sec").size() : 0, loss.size());
    EXPECT_EQ(scalars.count("staleness_mean") ? scalars.at("staleness_mean").size() : 0,
              loss.size());
    // The evaluations: every 100 steps and at the end.
    EXPECT_GE(scalars.count("test_accuracy") ? scalars.at("test_accuracy").size() : 0, 3u);
  }
}

// A scheduled rate (halved every 100 steps) is plotted with every loss
// point, at the rate of the point's global step.
TEST_F(TensorBoardTest, ScheduledLearningRateIsPlottedWithTheLoss) {
  std::string why_not;
  const std::string python = TestPython("tensorboard", &why_not);
  if (python.empty()) GTEST_SKIP() << why_not;
  ASSERT_NE(std::getenv("PST_SOURCE_DIR"), nullptr) << "run through ctest";

  const std::string dir = TestDir();
  LocalCluster cluster(1, 1, dir);
  cluster.StartAll({"--data_dir=" + data_dir(), "--model=mlp", "--batch_size=50",
                    "--train_steps=250", "--log_every_steps=25", "--eval_every_steps=100",
                    "--learning_rate=0.4", "--lr_schedule=step", "--lr_decay_steps=100",
                    "--lr_decay_rate=0.5", "--logdir=" + dir + "/tb", "--run_dir=" + dir});
  const std::vector<TaskExit> exits = cluster.WaitAll(std::chrono::seconds(300));
  for (const TaskExit& e : exits) ASSERT_EQ(e.code, 0) << DescribeExits(exits);
  const Scalars scalars = ReadRun(python, dir + "/tb/" + fs::path(dir).filename().string());
  ASSERT_TRUE(scalars.count("learning_rate")) << cluster.task("chief").Log();
  const std::vector<Point>& rates = scalars.at("learning_rate");
  EXPECT_EQ(rates.size(), scalars.count("loss") ? scalars.at("loss").size() : 0);
  for (const Point& p : rates) {
    EXPECT_NEAR(p.value, 0.4 * std::pow(0.5, p.step / 100), 1e-6) << "at step " << p.step;
  }
}

}  // namespace
}  // namespace pst
