// Models swapped while requests run: every answer comes from one whole
// model. Each version has its own parameters, so an answer from a mix of two
// would match neither.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "serve/request_handler.h"
#include "serve/testing/click_models.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kVersions = 6;

class ModelSwapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("serve_swap_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    WriteLines((dir_ / "train.txt").string(), CriteoLines(40));
    job_ = ClickJob((dir_ / "train.txt").string());
    for (int v = 0; v < kVersions; ++v) trained_.push_back(ClickModel(job_, 0.1f * (v + 1)));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Version v as a new ServedModel of step 100 (v + 1).
  std::unique_ptr<ServedModel> Version(int v) const {
    auto served = std::make_unique<ServedModel>();
    served->trained = trained_[v];  // the tensors shared, as an export's are
    served->source = "v" + std::to_string(v);
    served->step = served->base_step = 100 * (v + 1);
    return served;
  }

  // Version v's click probabilities for `lines`, by LoadedModel directly.
  std::vector<float> Expected(int v, const std::vector<std::string>& lines) const {
    std::unique_ptr<LoadedModel> loaded = LoadedModel::Make(trained_[v], "v").value();
    const Dataset data = loaded->ParseTestLines(lines, "criteo").value();
    std::vector<float> classes(data.size * 2);
    EXPECT_TRUE(loaded->PredictDataset(data, classes.data()).ok());
    std::vector<float> clicks;
    for (int64_t i = 0; i < data.size; ++i) clicks.push_back(classes[2 * i + 1]);
    return clicks;
  }

  fs::path dir_;
  Job job_;
  std::vector<TrainedModel> trained_;
};

TEST_F(ModelSwapTest, EveryAnswerComesFromOneWholeModel) {
  const std::vector<std::string> lines = CriteoLines(7, /*seed=*/5);
  const std::string body = Json{{"format", "criteo"}, {"lines", lines}}.dump();
  std::map<int64_t, std::vector<float>> expected;  // by step
  for (int v = 0; v < kVersions; ++v) expected[100 * (v + 1)] = Expected(v, lines);
  for (int v = 1; v < kVersions; ++v) ASSERT_NE(expected[100 * (v + 1)], expected[100]);

  ModelHolder holder("none yet");
  PredictorPool pool;
  ServeMetrics metrics;
  RequestHandler handler(&holder, &pool, &metrics, SteadyClock(), 1 << 20);
  holder.Publish(Version(0));

  constexpr int kThreads = 6;
  std::atomic<bool> swapping{true};
  std::atomic<int> answers{0}, wrong{0};
  std::map<int64_t, int> seen[kThreads];
  std::vector<std::thread> requests;
  for (int t = 0; t < kThreads; ++t) {
    requests.emplace_back([&, t] {
      for (int i = 0; i < 40 || swapping.load(); ++i) {
        const HttpResponse response = handler.Handle({"POST", "/predict", "", body, false});
        const Json answer = Json::parse(response.body);
        const int64_t step = answer.value("model_step", int64_t{-1});
        const auto it = expected.find(step);
        std::vector<float> got;
        for (const double p : answer.value("probabilities", std::vector<double>{})) {
          got.push_back(static_cast<float>(p));
        }
        if (response.status != 200 || it == expected.end() || got != it->second) ++wrong;
        ++seen[t][step];
        ++answers;
      }
    });
  }
  // A new model (a new object each time) after every answer or so, while
  // the other requests are halfway.
  for (int swap = 1; swap <= 300; ++swap) {
    const int before = answers.load();
    holder.Publish(Version(swap % kVersions));
    while (answers.load() == before) std::this_thread::yield();
  }
  swapping = false;
  for (std::thread& t : requests) t.join();

  EXPECT_EQ(wrong.load(), 0) << "of " << answers.load() << " answers";
  std::map<int64_t, int> steps;
  for (const auto& per_thread : seen) {
    for (const auto& [step, count] : per_thread) steps[step] += count;
  }
  EXPECT_GE(steps.size(), 2u) << "the answers came from one model only";
  // Only the newest model's LoadedModels are kept: at most one per thread.
  EXPECT_LE(pool.idle(), static_cast<size_t>(kThreads));
  EXPECT_EQ(holder.loads(), 301);
}

TEST_F(ModelSwapTest, PoolReusesAModelsLoadedModelAndDropsOlderOnes) {
  ModelHolder holder("none yet");
  PredictorPool pool;
  holder.Publish(Version(0));
  const std::shared_ptr<const ServedModel> first = holder.Get();
  LoadedModel* kept = nullptr;
  {
    StatusOr<PredictorPool::Lease> lease = pool.Acquire(first);
    ASSERT_TRUE(lease.ok());
    kept = &lease->model();
  }
  EXPECT_EQ(pool.idle(), 1u);
  {
    StatusOr<PredictorPool::Lease> again = pool.Acquire(first);
    EXPECT_EQ(&again->model(), kept);  // the same one, not built again
    holder.Publish(Version(1));
    StatusOr<PredictorPool::Lease> newer = pool.Acquire(holder.Get());
    ASSERT_TRUE(newer.ok());
    EXPECT_NE(&newer->model(), kept);
  }
  // The first model's LoadedModel went back after a newer was leased: dropped.
  EXPECT_EQ(pool.idle(), 1u);
}

}  // namespace
}  // namespace pst
