// bench_model_parallel: model parallelism (--model_parallel, a pipeline of
// stages) against data parallelism (a TowerModel) on the same devices.
//
// For mlp_relu and cnn at each --batch_sizes, times one training step
// (Model::ComputeGradients on a batch of synthetic examples: uniform pixels,
// random labels, 8 batches cycled; the SGD update, the same for all, is left
// out) of:
//   plain      the model on one device ("cpu": one thread);
//   data x2    2-way data parallel: TowerModel over --devices;
//   pipe M=m   2-stage model parallel over --devices, m micro-batches, for
//              each m in --micro_batches.
// Each row prints steps/s and the ratio to plain measured in the same run.
// Each run gets a warm-up that sizes its repeats; then --repeats rounds
// time every run of a (model, batch) in turn, interleaved so that the
// machine's changing load hits them alike; each run's median round is
// reported (SteadyClock()).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_main.h"
#include "bench/bench_timing.h"
#include "common/batch.h"
#include "common/clock.h"
#include "common/split.h"
#include "common/tensor.h"
#include "model/layers/initializer.h"
#include "model/parallel/make_pipelined_model.h"
#include "model/zoo/model_zoo.h"

DEFINE_int32(repeats, 5, "Timed repeats per figure; the median is reported");
DEFINE_double(repeat_s, 1.0, "Seconds per timed repeat");
DEFINE_string(batch_sizes, "64,128", "Comma-separated batch sizes");
DEFINE_string(micro_batches, "1,2,4,8", "Comma-separated micro-batch counts of the pipeline");
DEFINE_string(devices, "cpu,cpu", "The 2 devices of data and model parallelism");
DEFINE_string(models, "mlp_relu,cnn", "Comma-separated models");

namespace pst {
namespace {

// A model under test and the synthetic batches it steps through.
struct Run {
  std::string name;
  std::unique_ptr<Model> model;
  std::vector<Tensor> params, grads;
  std::vector<Batch> batches;
  size_t next = 0;

  void Step() {
    const StatusOr<float> loss = model->ComputeGradients(params, batches[next], &grads);
    CHECK(loss.ok()) << loss.status().ToString();
    next = (next + 1) % batches.size();
  }
};

Run MakeRun(std::string name, std::unique_ptr<Model> model, int batch_size) {
  Run run{std::move(name), std::move(model), {}, {}, std::vector<Batch>(8)};
  for (const VariableSpec& spec : run.model->variables()) {
    run.params.push_back(InitializeVariable(spec, /*seed=*/1));
  }
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, 9);
  for (Batch& batch : run.batches) {
    batch.size = batch_size;
    batch.feature_dim = run.model->input_dim();
    batch.features.resize(batch.size * batch.feature_dim);
    for (float& x : batch.features) x = pixel(rng);
    batch.labels.resize(batch.size);
    for (int32_t& y : batch.labels) y = label(rng);
  }
  return run;
}

// Steps/s of each run: warm-up steps (at least 3 and a fifth of a repeat)
// size each run's repeats; then --repeats rounds, each timing every run for
// about --repeat_s in turn (interleaved, so that a change in the machine's
// load hits every run alike); the median round of each run.
std::vector<double> StepsPerSecond(std::vector<Run>& runs) {
  std::vector<int64_t> calls;
  for (Run& run : runs) {
    int64_t warmup = 0;
    const MonotonicClock::TimePoint start = SteadyClock().Now();
    while (warmup < 3 || Seconds(SteadyClock().Now() - start) < FLAGS_repeat_s / 5) {
      run.Step();
      ++warmup;
    }
    const double estimate = Seconds(SteadyClock().Now() - start) / warmup;
    calls.push_back(std::max<int64_t>(1, std::llround(FLAGS_repeat_s / estimate)));
  }
  std::vector<std::vector<double>> rates(runs.size());
  for (int r = 0; r < FLAGS_repeats; ++r) {
    for (size_t i = 0; i < runs.size(); ++i) {
      const MonotonicClock::TimePoint start = SteadyClock().Now();
      for (int64_t c = 0; c < calls[i]; ++c) runs[i].Step();
      rates[i].push_back(calls[i] / Seconds(SteadyClock().Now() - start));
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& rate : rates) {
    std::sort(rate.begin(), rate.end());
    medians.push_back(rate[rate.size() / 2]);
  }
  return medians;
}

std::unique_ptr<Model> Must(StatusOr<std::unique_ptr<Model>> model) {
  CHECK(model.ok()) << model.status().ToString();
  return std::move(*model);
}

std::vector<int> Ints(const std::string& list) {
  std::vector<int> ints;
  for (const std::string& s : SplitCommas(list)) ints.push_back(std::stoi(s));
  return ints;
}

int Main() {
  const std::vector<int> batch_sizes = Ints(FLAGS_batch_sizes);
  const std::vector<int> micro_batches = Ints(FLAGS_micro_batches);
  const std::string one = SplitCommas(FLAGS_devices).front();
  std::printf("one training step (ComputeGradients), devices %s, median of %d repeats:\n",
              FLAGS_devices.c_str(), FLAGS_repeats);
  std::printf("%-10s %6s %-12s %10s %9s\n", "model", "batch", "run", "steps/s", "vs plain");
  for (const std::string& name : SplitCommas(FLAGS_models)) {
    for (int batch : batch_sizes) {
      std::vector<Run> runs;
      runs.push_back(MakeRun("plain", Must(MakeModel(name, 784, 10, one)), batch));
      runs.push_back(MakeRun("data x2", Must(MakeModel(name, 784, 10, FLAGS_devices)), batch));
      for (int m : micro_batches) {
        runs.push_back(MakeRun(
            "pipe M=" + std::to_string(m),
            Must(MakePipelinedModel(name, 784, 10, FLAGS_devices, PipelineOptions{2, m})), batch));
      }
      const std::vector<double> steps = StepsPerSecond(runs);
      for (size_t i = 0; i < runs.size(); ++i) {
        std::printf("%-10s %6d %-12s %10.1f %9.2f\n", name.c_str(), batch, runs[i].name.c_str(),
                    steps[i], steps[i] / steps[0]);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  if (!pst::StartBenchmark(
          &argc, &argv,
          "bench_model_parallel [--repeats=N] [--repeat_s=S] [--batch_sizes=64,128] "
          "[--micro_batches=1,2,4,8] [--devices=cpu,cpu] [--models=mlp_relu,cnn]: "
          "2-stage model parallelism vs 2-way data parallelism, steps/s",
          "bench/bench_model_parallel.cc")) {
    return 0;
  }
  return pst::Main();
}
