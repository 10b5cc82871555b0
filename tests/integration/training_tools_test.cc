// Training tools through real ps, worker and chief processes on a small
// generated CSV problem whose classes overlap (the validation accuracy stays
// well under 1 and moves while the model trains):
//  - a learning-rate schedule restored from a checkpoint goes on at the
//    checkpoint's global step, not from step 0;
//  - early stopping ends a run whose validation score no longer improves,
//    and best_model.bin is the model of its best evaluation;
//  - --lr_schedule=plateau: the chief lowers the rate, the reports follow,
//    and a restored run goes on at the checkpoint's lowered rate.
// The first two freeze training with --lr_schedule=step and a decay rate of 1e-12:
// after --lr_decay_steps the ps apply updates too small to change a float
// weight, so what the model does after that step is known in advance.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "job/model_file.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_datasets.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr int kValidationExamples = 250;

class TrainingToolsTest : public ::testing::Test {
 protected:
  // Three classes around centres in 2 dimensions, with noise of the centres'
  // own scale: an MLP gets most, never all, examples right.
  static void SetUpTestSuite() {
    data_dir_ = new std::string(MakeTestDir("training-tools-data"));
    std::mt19937 rng(17);
    const auto centres = Centres(3, 2, rng);
    WriteCsv(*data_dir_ + "/train.csv", 1500, centres, rng);
    WriteCsv(*data_dir_ + "/test.csv", 300, centres, rng);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*data_dir_);
    delete data_dir_;
    data_dir_ = nullptr;
  }
  static std::vector<std::string> DataFlags() {
    return {"--dataset=csv", "--train_file=" + *data_dir_ + "/train.csv",
            "--test_file=" + *data_dir_ + "/test.csv", "--label_column=-1",
            "--validation_examples=" + std::to_string(kValidationExamples)};
  }
  // The data, the model and a learning rate of 0.5 that falls to 5e-13 at
  // global step `freeze_at`.
  static std::vector<std::string> TrainingFlags(int freeze_at) {
    std::vector<std::string> flags = DataFlags();
    flags.insert(flags.end(),
                 {"--normalize", "--model=mlp", "--batch_size=20", "--learning_rate=0.5",
                  "--lr_schedule=step", "--lr_decay_steps=" + std::to_string(freeze_at),
                  "--lr_decay_rate=1e-12", "--rpc_timeout_ms=20000"});
    return flags;
  }
  // A fresh folder named after the running test.
  static std::string TestDir() {
    return MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  // Runs one ps, one worker and the chief in `dir` (also the --run_dir) to
  // their end; every task must exit 0. Returns the chief's log.
  static std::string Train(const std::string& dir, std::vector<std::string> flags) {
    fs::create_directories(dir);
    LocalCluster cluster(1, 1, dir);
    flags.push_back("--run_dir=" + dir);
    cluster.StartAll(flags);
    const auto exits = cluster.WaitAll(seconds(240));
    const std::string log = cluster.task("chief").Log();
    for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << log;
    return log;
  }
  // The largest absolute difference between two model files' variables.
  static double MaxDifference(const std::string& a_path, const std::string& b_path) {
    StatusOr<TrainedModel> a = ReadModelFile(a_path);
    StatusOr<TrainedModel> b = ReadModelFile(b_path);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!a.ok() || !b.ok()) return INFINITY;
    EXPECT_EQ(a->params.size(), b->params.size());
    EXPECT_FALSE(a->params.empty());
    if (a->params.size() != b->params.size()) return INFINITY;
    double largest = 0;
    for (size_t v = 0; v < a->params.size(); ++v) {
      const Tensor& x = a->params[v];
      const Tensor& y = b->params[v];
      EXPECT_EQ(x.shape(), y.shape()) << "variable " << v;
      if (x.shape() != y.shape() || x.dtype() != DType::kFloat32) return INFINITY;
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        largest = std::max(largest, std::fabs(double(x.f32()[i]) - double(y.f32()[i])));
      }
    }
    return largest;
  }

  static inline std::string* data_dir_ = nullptr;
};

// Run 1 trains steps 0..99 at 0.5 and leaves a checkpoint at step 100; run 2,
// with the same schedule and --checkpoint_dir, restores it and trains steps
// 100..199, at 5e-13 when it computes the rate from the restored global step:
// its model is run 1's. A schedule started again from step 0 would train
// them at 0.5 and move the weights far (by more than 0.01 here).
TEST_F(TrainingToolsTest, RestoredLearningRateScheduleGoesOnAtTheCheckpointStep) {
  const std::string dir = TestDir();
  const std::string checkpoints = dir + "/checkpoints";
  std::vector<std::string> flags = TrainingFlags(/*freeze_at=*/100);
  flags.insert(flags.end(), {"--checkpoint_dir=" + checkpoints, "--checkpoint_every_steps=50",
                             "--eval_every_steps=0"});

  std::vector<std::string> first_flags = flags;
  first_flags.push_back("--train_steps=100");
  const std::string first = Train(dir + "/run1", first_flags);
  EXPECT_EQ(first.find("restored checkpoint"), std::string::npos) << first;
  EXPECT_EQ(ReportValue(first, "Global-Step: ").value_or(0), 100) << first;
  ASSERT_TRUE(fs::exists(checkpoints + "/ckpt-000000000100/manifest")) << first;

  std::vector<std::string> second_flags = flags;
  second_flags.push_back("--train_steps=200");
  const std::string second = Train(dir + "/run2", second_flags);
  EXPECT_NE(second.find("restored checkpoint " + checkpoints + "/ckpt-000000000100 at step 100"),
            std::string::npos)
      << second;
  EXPECT_EQ(ReportValue(second, "Global-Step: ").value_or(0), 200) << second;

  const double moved = MaxDifference(dir + "/run1/model.bin", dir + "/run2/model.bin");
  EXPECT_LT(moved, 1e-6) << "100 steps after the restore moved a weight by " << moved
                         << ": the ps did not go on with the schedule at step 100\n"
                         << second;
}

// One evaluation's accuracies, from metrics.jsonl.
struct ValidationScore {
  int64_t step;
  double accuracy;  // on the validation split
  double test_accuracy;
};

// The first evaluation of `scores` (in order) with the highest accuracy
// among those at steps <= `last_step`.
ValidationScore BestUpTo(const std::vector<ValidationScore>& scores, int64_t last_step) {
  ValidationScore best{-1, -1, -1};
  for (const ValidationScore& s : scores) {
    if (s.step <= last_step && s.accuracy > best.accuracy) best = s;
  }
  return best;
}

// Evaluations every 20 steps (or as often as the chief gets to them),
// patience 8, and training frozen at step 1500: every evaluation of the
// frozen model scores the same, so the run stops at the latest 9
// evaluations after that step, far before --train_steps (or before the
// freeze, when the noisy score stalls on its own). The stop line names the
// best evaluation so far (the first with the highest validation accuracy in
// metrics.jsonl) and comes exactly `patience` evaluations after it. The
// last best model written is the best of all the run's evaluations (the
// final one, after the workers left, included), and predict scores
// best_model.bin on the validation and test splits exactly as that
// evaluation did. model.bin is that model too, and the report gives its
// step (Model-Step) and test accuracy, not the final evaluation's.
std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST_F(TrainingToolsTest, EarlyStoppingEndsTheRunAndKeepsTheBestModel) {
  constexpr int kTrainSteps = 50000, kPatience = 8;
  const std::string dir = TestDir();
  std::vector<std::string> flags = TrainingFlags(/*freeze_at=*/1500);
  flags.insert(flags.end(),
               {"--train_steps=" + std::to_string(kTrainSteps), "--eval_every_steps=20",
                "--log_every_steps=200", "--early_stopping_patience=" + std::to_string(kPatience)});
  const std::string log = Train(dir, flags);

  // "early stopping at step S: no improvement in K evaluations since step B
  // (best validation score X)"
  const size_t stop_at = log.find("early stopping at step ");
  ASSERT_NE(stop_at, std::string::npos)
      << "no early stop; the chief's log ends\n"
      << log.substr(log.size() - std::min<size_t>(log.size(), 3000));
  const std::string stop_line = log.substr(stop_at, log.find('\n', stop_at) - stop_at);
  const int64_t stop_step = static_cast<int64_t>(ReportValue(stop_line, " at step ").value_or(-1));
  const int64_t best_step =
      static_cast<int64_t>(ReportValue(stop_line, "since step ").value_or(-1));
  const double best_score = ReportValue(stop_line, "(best validation score ").value_or(-1);
  EXPECT_NE(stop_line.find(": no improvement in " + std::to_string(kPatience) + " evaluations"),
            std::string::npos)
      << stop_line;
  EXPECT_LT(stop_step, kTrainSteps) << stop_line;
  const int64_t final_step = static_cast<int64_t>(ReportValue(log, "Global-Step: ").value_or(-1));
  EXPECT_GE(final_step, stop_step) << log;
  EXPECT_LT(final_step, kTrainSteps) << log;

  // Every evaluation, in order: those while training, then the final one.
  std::vector<ValidationScore> scores;
  for (const std::string& line : ReadLines(dir + "/metrics.jsonl")) {
    const auto step = ReportValue(line, "\"step\": ");
    const auto accuracy = ReportValue(line, "\"validation_accuracy\": ");
    const auto test_accuracy = ReportValue(line, "\"test_accuracy\": ");
    ASSERT_TRUE(step && accuracy && test_accuracy) << line;
    scores.push_back({static_cast<int64_t>(*step), *accuracy, *test_accuracy});
  }
  ASSERT_GE(scores.size(), static_cast<size_t>(kPatience + 2)) << log;
  const ValidationScore best_at_stop = BestUpTo(scores, stop_step);
  EXPECT_EQ(best_at_stop.step, best_step) << stop_line;
  EXPECT_NEAR(best_at_stop.accuracy, best_score, 1e-5) << stop_line;
  EXPECT_EQ(std::count_if(scores.begin(), scores.end(),
                          [&](const ValidationScore& s) {
                            return s.step > best_step && s.step <= stop_step;
                          }),
            kPatience)
      << log;

  // The chief's line for the last best_model.bin it wrote.
  const ValidationScore best = BestUpTo(scores, final_step);
  const size_t kept_at = log.rfind(": best validation score so far, ");
  ASSERT_NE(kept_at, std::string::npos) << log;
  const size_t kept_line = log.rfind("step ", kept_at);
  std::ostringstream kept;
  kept << "step " << best.step << ": best validation score so far, " << best.accuracy
       << ": written to best_model.bin";
  EXPECT_EQ(log.compare(kept_line, kept.str().size(), kept.str()), 0)
      << "expected " << kept.str() << ", the last best model written is\n"
      << log.substr(kept_line, log.find('\n', kept_at) - kept_line);

  // predict: best_model.bin twice, as an ensemble (which scores the
  // validation split, held out as the run held it out).
  ASSERT_TRUE(fs::exists(dir + "/best_model.bin")) << log;
  const std::string kept_model = dir + "/best_model.bin";
  std::vector<std::string> argv = {BinDir() + "/predict",
                                   "--ensemble=" + kept_model + "," + kept_model};
  for (const std::string& flag : DataFlags()) argv.push_back(flag);
  auto predict = ChildProcess::Start(argv, dir + "/predict.log");
  ASSERT_TRUE(predict.ok()) << predict.status().ToString();
  ASSERT_EQ((*predict)->Wait(seconds(60)), 0) << (*predict)->Log();
  const std::string report = (*predict)->Log();
  // Printed to 4 decimals: 250 examples make every validation accuracy
  // exact in them; 300 test examples do not.
  EXPECT_NEAR(ReportValue(report, "Ensemble-Validation-Accuracy: ").value_or(-1), best.accuracy,
              1e-6)
      << report << "\nthe best evaluation, at step " << best.step << ", scored " << best.accuracy;
  EXPECT_NEAR(ReportValue(report, "Ensemble-Test-Accuracy: ").value_or(-1), best.test_accuracy,
              0.5e-4 + 1e-9)
      << report << "\nthe best evaluation, at step " << best.step << ", had test accuracy "
      << best.test_accuracy;
  EXPECT_EQ(ReadFileBytes(dir + "/model.bin"), ReadFileBytes(kept_model));
  EXPECT_EQ(ReportValue(log, "Model-Step: ").value_or(-1), best.step) << log;
  EXPECT_NEAR(ReportValue(log, "Test-Accuracy: ").value_or(-1), best.test_accuracy, 0.5e-4 + 1e-9)
      << log;
}

// The rates of a plateau schedule from 0.5, halved by each lowering.
double PlateauRate(int lowerings) { return 0.5 * std::pow(0.5, lowerings); }

// Checks every rate the chief's log shows (Step and progress lines) against
// the lowerings logged before it, starting from `lowerings`; returns the
// lowerings at the end. Each lowering line names the next k and its rate.
int CheckPlateauLog(const std::string& log, int lowerings) {
  std::istringstream lines(log);
  int rates_seen = 0;
  for (std::string line; std::getline(lines, line);) {
    // "step S: validation loss L did not improve for 1 evaluation: learning
    // rate lowered to X (lowering K)"
    if (line.find(" did not improve for 1 evaluation: learning rate lowered to ") !=
        std::string::npos) {
      ++lowerings;
      EXPECT_EQ(ReportValue(line, "(lowering ").value_or(-1), lowerings) << line;
      EXPECT_NEAR(ReportValue(line, "lowered to ").value_or(-1), PlateauRate(lowerings), 1e-6)
          << line;
    }
    if (line.rfind("Step: ", 0) == 0) {
      ++rates_seen;
      EXPECT_NEAR(ReportValue(line, ", LR: ").value_or(-1), PlateauRate(lowerings), 1e-7) << line;
    }
    if (line.rfind("Progress: ", 0) == 0) {
      EXPECT_NEAR(ReportValue(line, ", lr ").value_or(-1), PlateauRate(lowerings), 1e-7) << line;
    }
  }
  EXPECT_GE(rates_seen, 3) << log;
  return lowerings;
}

// The chief's periodic evaluations before step `train_steps` ("step S: test
// accuracy A, ..."): the plateau decision follows each of them while training.
int EvaluationsWhileTraining(const std::string& log, int64_t train_steps) {
  std::istringstream lines(log);
  int evaluations = 0;
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("] step ");
    if (at == std::string::npos || line.find(": test accuracy ", at) == std::string::npos) continue;
    evaluations += std::stoll(line.substr(at + 7)) < train_steps;
  }
  return evaluations;
}

// --lr_schedule=plateau with a --lr_plateau_min_delta no loss can beat: the
// first evaluation sets the best, and each later one while training lowers
// the rate (patience 1): as many lowerings as evaluations but one (how many
// evaluations the chief makes depends on how fast it is beside the workers:
// a chief slowed by a loaded machine makes fewer; the worker's steps are
// slowed to 2 ms so that there are several). Every rate reported follows the lowerings logged
// before it, the ps take each k, and the final checkpoint's manifest records
// k. Run 2 restores that checkpoint: the ps go on at k (the chief says so,
// and reports that rate) until its own decision, started afresh, lowers it
// again.
TEST_F(TrainingToolsTest, PlateauLowersTheRateAndARestoredRunGoesOnLowered) {
  const std::string dir = TestDir();
  const std::string checkpoints = dir + "/checkpoints";
  std::vector<std::string> flags = DataFlags();
  flags.insert(
      flags.end(),
      {"--normalize", "--model=mlp", "--batch_size=20", "--learning_rate=0.5",
       "--lr_schedule=plateau", "--lr_decay_rate=0.5", "--lr_plateau_patience=1",
       "--lr_plateau_min_delta=100", "--eval_every_steps=50", "--log_every_steps=25",
       "--simulated_delay_ms=2", "--checkpoint_dir=" + checkpoints, "--rpc_timeout_ms=20000"});

  std::vector<std::string> first_flags = flags;
  first_flags.push_back("--train_steps=300");
  const std::string first = Train(dir + "/run1", first_flags);
  const int lowered = CheckPlateauLog(first, 0);
  EXPECT_EQ(lowered, EvaluationsWhileTraining(first, 300) - 1) << first;
  ASSERT_GE(lowered, 1) << first;
  const auto ps_took = [](const std::string& run_dir, int k) {
    const std::vector<std::string> log = ReadLines(run_dir + "/ps-0.log");
    const std::string line = "the learning rate is lowered " + std::to_string(k) + " times";
    return std::any_of(log.begin(), log.end(),
                       [&](const std::string& l) { return l.find(line) != std::string::npos; });
  };
  for (int k = 1; k <= lowered; ++k) EXPECT_TRUE(ps_took(dir + "/run1", k)) << "k = " << k;
  const std::vector<std::string> manifest = ReadLines(checkpoints + "/ckpt-000000000300/manifest");
  EXPECT_NE(std::find(manifest.begin(), manifest.end(), "lr_lowerings " + std::to_string(lowered)),
            manifest.end())
      << first;

  std::vector<std::string> second_flags = flags;
  second_flags.push_back("--train_steps=400");
  const std::string second = Train(dir + "/run2", second_flags);
  EXPECT_NE(second.find("the learning rate goes on lowered " + std::to_string(lowered) + " times"),
            std::string::npos)
      << second;
  EXPECT_TRUE(ps_took(dir + "/run2", lowered));
  EXPECT_GE(CheckPlateauLog(second, lowered), lowered);
}

}  // namespace
}  // namespace pst
