// What the ChiefReporter writes: the Step, progress and final report lines
// (to a file standing in for stdout) and metrics.jsonl, for given states and
// a FakeClock. No sockets, no processes, no sleeps.
#include "chief/chief_reporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace pst {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

std::string TestDir() {
  return (fs::path(::testing::TempDir()) / ("chief_reporter_test_" + std::to_string(getpid())))
      .string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

ReportWindow Window(int64_t reports, double loss) {
  ReportWindow w;
  w.reports = reports;
  w.mean_loss = loss;
  w.mean_step_ms = 3.5;
  w.epoch = 1;
  w.batch = 3;
  w.batches_per_epoch = 10;
  return w;
}

ProgressSnapshot At(int64_t step) {
  ProgressSnapshot p;
  p.step = step;
  p.total_steps = 100;
  p.percent = static_cast<double>(step);
  p.steps_per_sec = 20;
  p.examples_per_sec = 640;
  p.elapsed_secs = 2.5;
  p.eta_secs = 3;
  return p;
}

class ChiefReporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.train_steps = 100;
    options_.progress_every_secs = 5;
    state_.set_state(wire::ClusterState::Training);
    state_.RecordJoin(0);
    state_.RecordJoin(1);
    state_.RecordHeartbeat(wire::Role::Ps, 0);
  }
  void TearDown() override {
    reporter_.reset();
    if (out_) std::fclose(out_);
    fs::remove_all(dir_);
  }

  // Made once the test has set its options.
  ChiefReporter& Reporter() {
    out_ = std::fopen((dir_ + "/stdout").c_str(), "w");
    reporter_ = std::make_unique<ChiefReporter>(
        options_, &state_, MetricsWriter::Open(dir_ + "/metrics.jsonl").value(), out_);
    return *reporter_;
  }
  std::string Printed() const { return ReadAll(dir_ + "/stdout"); }
  std::string Metrics() const { return ReadAll(dir_ + "/metrics.jsonl"); }

  const std::string dir_ = TestDir();
  ChiefOptions options_;
  FakeClock clock_;
  ChiefState state_{1, 100, 2, 1, "", clock_};
  std::FILE* out_ = nullptr;
  std::unique_ptr<ChiefReporter> reporter_;
};

TEST_F(ChiefReporterTest, AStepLinePerTrainingReport) {
  ChiefReporter& reporter = Reporter();
  ASSERT_TRUE(reporter.LogTraining(50, Window(4, 0.12345), At(50), 0).ok());
  EXPECT_EQ(Printed(), "Step: 50, Epoch: 2, Batch: 4 of 10, Cost: 0.1235, AvgTime: 3.50 ms\n");
}

TEST_F(ChiefReporterTest, TheLastLineRepeatsTheLastReportAtTheFinalStep) {
  ChiefReporter& reporter = Reporter();
  ASSERT_TRUE(reporter.LogLastTraining(100, Window(0, 0), At(100), 0).ok());
  EXPECT_EQ(Printed(), "");  // no report ever came
  ASSERT_TRUE(reporter.LogTraining(90, Window(4, 0.5), At(90), 0).ok());
  ASSERT_TRUE(reporter.LogLastTraining(100, Window(0, 0), At(100), 0).ok());
  EXPECT_EQ(Printed(),
            "Step: 90, Epoch: 2, Batch: 4 of 10, Cost: 0.5000, AvgTime: 3.50 ms\n"
            "Step: 100, Epoch: 2, Batch: 4 of 10, Cost: 0.5000, AvgTime: 3.50 ms\n");
}

// Not a terminal: a new "Progress:" line every --progress_every_secs, with
// the newest loss and test accuracy; the final one whenever asked.
TEST_F(ChiefReporterTest, ProgressLinesOnTimeAndAtTheEnd) {
  ChiefReporter& reporter = Reporter();
  ASSERT_TRUE(reporter.LogTraining(10, Window(1, 0.25), At(10), 0).ok());
  reporter.ShowProgress(clock_.Now(), At(10), false);
  clock_.Advance(seconds(4));
  reporter.ShowProgress(clock_.Now(), At(20), false);  // not due
  reporter.set_test_accuracy(0.9);
  clock_.Advance(seconds(1));
  reporter.ShowProgress(clock_.Now(), At(30), false);
  reporter.ShowProgress(clock_.Now(), At(40), true);
  EXPECT_EQ(Printed(),
            "Step: 10, Epoch: 2, Batch: 4 of 10, Cost: 0.2500, AvgTime: 3.50 ms\n"
            "Progress: step 10/100 (10.0%), 20.0 steps/s, 640 examples/s, loss 0.2500, "
            "elapsed 2.5 s, ETA 3.0 s\n"
            "Progress: step 30/100 (30.0%), 20.0 steps/s, 640 examples/s, loss 0.2500, "
            "test accuracy 0.9000, elapsed 2.5 s, ETA 3.0 s\n"
            "Progress: step 40/100 (40.0%), 20.0 steps/s, 640 examples/s, loss 0.2500, "
            "test accuracy 0.9000, elapsed 2.5 s, ETA 3.0 s\n");
}

TEST_F(ChiefReporterTest, NoProgressLineWhenTurnedOff) {
  options_.progress_every_secs = 0;
  Reporter().ShowProgress(clock_.Now(), At(10), true);
  EXPECT_EQ(Printed(), "");
}

TEST_F(ChiefReporterTest, AnEvaluationIsALineOfMetrics) {
  ChiefReporter& reporter = Reporter();
  ASSERT_TRUE(reporter.LogTraining(40, Window(2, 0.5), At(40), 0).ok());
  Evaluation test;
  test.loss = 0.25;
  test.accuracy = 0.75;
  Evaluation validation;
  validation.loss = 0.375;
  validation.accuracy = 0.625;
  ClusterCounts c;
  c.staleness_sum = 6;
  c.staleness_count = 3;
  c.staleness_max = 4;
  c.dropped = 1;
  c.scaled = 2;
  c.stale_dropped = 3;
  c.shards.resize(1);
  c.shards[0].store.bytes = 48;
  c.shards[0].bytes_in = 100;
  c.shards[0].bytes_out = 200;
  c.shards[0].store.updates_applied = 40;
  c.shards[0].queue_depth = 1;
  ASSERT_TRUE(reporter.RecordEvaluation(60, 20, 8, test, validation, c).ok());
  EXPECT_EQ(Metrics(),
            "{\"format_version\": 1, \"time\": 8, \"step\": 60, \"train_loss\": 0.5, "
            "\"steps_per_sec\": 5, \"examples_per_sec\": 0, \"live_workers\": 2, \"live_ps\": 1, "
            "\"task_deaths\": 0, \"test_loss\": 0.25, \"test_accuracy\": 0.75, "
            "\"validation_loss\": 0.375, \"validation_accuracy\": 0.625, \"staleness_mean\": 2, "
            "\"staleness_max\": 4, \"gradients_dropped\": 1, \"gradients_scaled\": 2, "
            "\"stale_gradients_dropped\": 3, \"ps0_bytes_held\": 48, \"ps0_bytes_in\": 100, "
            "\"ps0_bytes_out\": 200, \"ps0_updates_applied\": 40, \"ps0_queue_depth\": 1}\n");
}

TEST_F(ChiefReporterTest, TheFinalReportOfASyncRun) {
  ChiefReporter& reporter = Reporter();
  ASSERT_TRUE(reporter.LogTraining(100, Window(2, 0.125), At(100), 0).ok());
  Evaluation test;
  test.accuracy = 0.75;
  Evaluation validation;
  validation.accuracy = 0.625;
  ClusterCounts c;
  c.stale_dropped = 3;
  c.aggregated = {50, 48};
  reporter.PrintReport(100, test, validation, 12.5, c, /*sync=*/true);
  EXPECT_EQ(Printed(),
            "Step: 100, Epoch: 2, Batch: 4 of 10, Cost: 0.1250, AvgTime: 3.50 ms\n"
            "Validation-Accuracy: 0.6250\n"
            "Test-Accuracy: 0.7500\n"
            "Total Time: 12.50s\n"
            "Final Cost: 0.1250\n"
            "Global-Step: 100\n"
            "Stale-Gradients-Dropped: 3\n"
            "Aggregated-Gradients: worker:0=50 worker:1=48\n");
}

// A click model's report adds its AUC, log-loss and CTR; async has no
// aggregated-gradients line.
TEST_F(ChiefReporterTest, TheFinalReportOfAnAsyncClickModel) {
  Evaluation test;
  test.accuracy = 0.75;
  test.auc = 0.8;
  test.log_loss = 0.45;
  test.ctr = 0.25;
  Reporter().PrintReport(100, test, std::nullopt, 12.5, ClusterCounts(), /*sync=*/false);
  EXPECT_EQ(Printed(),
            "Test-Accuracy: 0.7500\n"
            "Test-AUC: 0.8000\n"
            "Test-LogLoss: 0.4500\n"
            "Test-CTR: 0.2500\n"
            "Total Time: 12.50s\n"
            "Final Cost: 0.0000\n"
            "Global-Step: 100\n"
            "Stale-Gradients-Dropped: 0\n");
}

}  // namespace
}  // namespace pst
