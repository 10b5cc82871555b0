// GradientStreamer over two in-process shards (a push is applied inside
// Send), driven as a model's backward pass would drive it: the last
// layer's gradients reported first.
#include "worker/gradient_streamer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/layers/initializer.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"

namespace pst {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kCluster = 9;

class GradientStreamerTest : public ::testing::Test {
 protected:
  // Two layers: d0 (variables 0-1, reported last) and d1 (2-3), all zeros,
  // learning rate 1; every gradient element is 1.
  void SetUp() override {
    model_variables_ = {{"d0/w", DType::kFloat32, {3, 2}},
                        {"d0/b", DType::kFloat32, {2}},
                        {"d1/w", DType::kFloat32, {2, 2}},
                        {"d1/b", DType::kFloat32, {2}}};
    PlacementOptions options;
    options.num_shards = 2;
    placement_ = std::make_unique<Placement>(
        Placement::Compute(WithGlobalStep(model_variables_), options).value());
    std::vector<Tensor> values;
    for (const VariableSpec& spec : placement_->variables()) {
      values.push_back(Tensor(spec.dtype, spec.shape));
    }
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.global_step_variable = kGlobalStepName;
    ASSERT_TRUE(ShardAdmin(&*shards_.Client(*placement_, kCluster, wire::Role::Chief))
                    .Initialize(config, values)
                    .ok());
    for (const VariableSpec& spec : model_variables_) {
      Tensor grad(spec.dtype, spec.shape);
      for (int64_t i = 0; i < grad.num_elements(); ++i) grad.f32()[i] = 1.0f;
      grads_.push_back(grad);
    }
    worker_ = shards_.Client(*placement_, kCluster);
    observer_ = shards_.Client(*placement_, kCluster);
    ASSERT_TRUE(worker_->Pull({1, 2, 3, 4}, &values_).ok());  // versions for the pushes
  }
  std::unique_ptr<GradientStreamer> Streamer(int64_t bucket_bytes) {
    return std::make_unique<GradientStreamer>(worker_.get(), model_variables_,
                                              std::vector<int>{1, 2, 3, 4}, bucket_bytes);
  }
  // What the shards hold now: variable v's first element (0: the global step).
  double Now(int v) {
    std::vector<Tensor> now;
    EXPECT_TRUE(observer_->Pull({v}, &now).ok());
    return v == 0 ? static_cast<double>(now[0].i64()[0]) : now[0].f32()[0];
  }
  struct Finished {
    StatusOr<PushSummary> summary;
    bool pulled = false;
    std::optional<std::string> diverged;
  };
  Finished Finish(GradientStreamer& streamer, float loss = 0.5f) {
    Finished f{PushSummary()};
    f.summary = streamer.Finish(loss, &values_, &f.pulled, &f.diverged);
    return f;
  }

  InProcessShards shards_{2};
  std::vector<VariableSpec> model_variables_;
  std::unique_ptr<Placement> placement_;
  std::vector<Tensor> grads_, values_;
  std::unique_ptr<PsClient> worker_, observer_;
};

TEST_F(GradientStreamerTest, EachLayerGoesOutAsItIsReadyAndTheLastPartCountsTheStep) {
  auto streamer = Streamer(0);
  streamer->StartStep(&grads_, /*train_steps=*/10);
  streamer->Ready(2, 4);
  EXPECT_EQ(Now(3), -1.0);  // d1 applied while d0 is still being made
  EXPECT_EQ(Now(1), 0.0);
  EXPECT_EQ(Now(0), 0.0);  // the step counts with its last part
  streamer->Ready(0, 2);
  EXPECT_EQ(Now(1), -1.0);
  EXPECT_EQ(Now(0), 1.0);
  Finished first = Finish(*streamer);
  ASSERT_TRUE(first.summary.ok()) << first.summary.status().ToString();
  EXPECT_EQ(first.summary->global_step, -1);  // no push before it
  EXPECT_TRUE(first.pulled);
  EXPECT_FALSE(first.diverged);
  EXPECT_EQ(values_[0].f32()[0], -1.0f);  // the next step's values, pushes included
  EXPECT_EQ(values_[3].f32()[0], -1.0f);

  // The next step's first part collects the push before it.
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  streamer->Ready(0, 2);
  Finished second = Finish(*streamer);
  ASSERT_TRUE(second.summary.ok()) << second.summary.status().ToString();
  EXPECT_EQ(second.summary->global_step, 1);
  EXPECT_EQ(second.summary->applied, 4u);  // both parts of step 1, summed
  EXPECT_EQ(Now(0), 2.0);
}

// Each part's values are pulled right behind it, while the layers before
// it are still being differentiated: what another worker pushes to them
// after that reaches the next step's pull, not this one.
TEST_F(GradientStreamerTest, EachPartsValuesArePulledRightBehindIt) {
  auto streamer = Streamer(0);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  Tensor other(DType::kFloat32, {2, 2});
  for (int i = 0; i < 4; ++i) other.f32()[i] = 1.0f;
  ASSERT_TRUE(observer_->Push({3}, {other}, false).ok());  // d1/w, another worker's
  streamer->Ready(0, 2);
  ASSERT_TRUE(Finish(*streamer).pulled);
  EXPECT_EQ(values_[2].f32()[0], -1.0f);  // pulled before the other push
  EXPECT_EQ(Now(3), -2.0);
  EXPECT_EQ(values_[0].f32()[0], -1.0f);  // d0, pulled behind the last part
}

TEST_F(GradientStreamerTest, SmallLayersWaitForABucketToFill) {
  auto streamer = Streamer(1 << 20);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  EXPECT_EQ(Now(3), 0.0);  // not sent yet
  streamer->Ready(0, 2);
  EXPECT_EQ(Now(3), -1.0);
  EXPECT_EQ(Now(1), -1.0);
  EXPECT_TRUE(Finish(*streamer).pulled);
}

// The previous push is collected when this step's first part is ready, not
// at the first report: its acknowledgement (under --ps_replicas, once the
// backups hold it) has the backward pass until then to come.
TEST_F(GradientStreamerTest, ThePreviousPushIsCollectedWhenTheFirstPartIsReady) {
  auto streamer = Streamer(1 << 20);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  streamer->Ready(0, 2);
  ASSERT_TRUE(Finish(*streamer).pulled);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);  // fills no bucket
  std::vector<Tensor> values;
  EXPECT_EQ(worker_->Pull({1}, &values).code(), Code::kFailedPrecondition);  // still in flight
  streamer->Ready(0, 2);
  Finished second = Finish(*streamer);
  ASSERT_TRUE(second.summary.ok()) << second.summary.status().ToString();
  EXPECT_EQ(second.summary->global_step, 1);
  EXPECT_EQ(Now(0), 2.0);
}

// The push before this step took the global step to the train steps: this
// step is not pushed, and nothing stays in flight.
TEST_F(GradientStreamerTest, AStepAfterTheLastIsNotPushed) {
  auto streamer = Streamer(0);
  streamer->StartStep(&grads_, /*train_steps=*/1);
  streamer->Ready(2, 4);
  streamer->Ready(0, 2);
  ASSERT_TRUE(Finish(*streamer).summary.ok());
  streamer->StartStep(&grads_, 1);
  streamer->Ready(2, 4);
  streamer->Ready(0, 2);
  Finished over = Finish(*streamer);
  ASSERT_TRUE(over.summary.ok());
  EXPECT_EQ(over.summary->global_step, 1);
  EXPECT_FALSE(over.pulled);
  EXPECT_EQ(Now(0), 1.0);
  EXPECT_EQ(Now(3), -1.0);
  EXPECT_TRUE(worker_->Pull({1}, &values_).ok());  // nothing in flight
  // Only the step pushed whole counts in the step's phases.
  const StepPhases& phases = streamer->phases();
  EXPECT_EQ(phases.steps(), 1);
  EXPECT_GT(phases.Mean(StepPhases::kSending), 0);
  EXPECT_GT(phases.Mean(StepPhases::kPull), 0);
  EXPECT_GE(phases.MeanComputing(), 0);
}

// The parts before a non-finite gradient went out (they were finite); the
// rest does not, and the step is reported diverged, loss included.
TEST_F(GradientStreamerTest, ANonFiniteGradientStopsTheSending) {
  grads_[1].f32()[1] = std::nanf("");
  auto streamer = Streamer(0);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  streamer->Ready(0, 2);
  Finished f = Finish(*streamer);
  ASSERT_TRUE(f.summary.ok()) << f.summary.status().ToString();
  EXPECT_EQ(f.diverged, "gradient of d0/b not finite (loss 0.5)");
  EXPECT_FALSE(f.pulled);
  EXPECT_EQ(Now(3), -1.0);
  EXPECT_EQ(Now(2), 0.0);
  EXPECT_EQ(Now(0), 0.0);
  EXPECT_TRUE(worker_->Pull({1}, &values_).ok());  // nothing in flight
}

TEST_F(GradientStreamerTest, ANonFiniteLossIsReportedFirst) {
  auto streamer = Streamer(0);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  streamer->Ready(0, 2);
  Finished f = Finish(*streamer, std::nanf(""));
  EXPECT_EQ(f.diverged, "loss nan");
  EXPECT_FALSE(f.pulled);
}

TEST_F(GradientStreamerTest, AFailedStepReturnsItsErrorWithNothingInFlight) {
  auto streamer = Streamer(0);
  streamer->StartStep(&grads_, 10);
  streamer->Ready(2, 4);
  bool pulled = true;
  std::optional<std::string> diverged;
  const StatusOr<PushSummary> failed =
      streamer->Finish(Internal("the device failed"), &values_, &pulled, &diverged);
  EXPECT_EQ(failed.status().message(), "the device failed");
  EXPECT_FALSE(pulled);
  EXPECT_TRUE(worker_->Pull({1}, &values_).ok());
}

// Replicated shards: the chains stay as placed (shard k: ps:k, backed up
// by the other).
class FixedRoutes : public RouteSource {
 public:
  StatusOr<std::vector<ShardChain>> FetchRoutes() override { return Chains(); }
  static std::vector<ShardChain> Chains() { return {{0, 1, 0, {1}}, {1, 1, 1, {0}}}; }
};

// Under --ps_replicas a worker keeps two pushes in flight: a step's first
// part collects the push two steps back. When that one ends training, the
// push still in flight is collected too before the step returns, so the
// worker reports holding only what every replica holds.
TEST(ReplicatedGradientStreamerTest, TheEndCollectsEveryPushInFlight) {
  InProcessShards shards(2, nullptr, nullptr, {}, /*replicated=*/true);
  const std::vector<VariableSpec> variables = {{"w", DType::kFloat32, {2}}};
  PlacementOptions options;
  options.num_shards = 2;
  const Placement placement = Placement::Compute(WithGlobalStep(variables), options).value();
  FixedRoutes routes;
  auto chief = shards.Client(placement, kCluster, wire::Role::Chief);
  chief->RouteByChains(&routes);
  ShardConfig config;
  config.optimizer.learning_rate = 1.0f;
  config.global_step_variable = kGlobalStepName;
  ASSERT_TRUE(ShardAdmin(&*chief)
                  .Initialize(config, {Tensor(DType::kInt64, {}), Tensor(DType::kFloat32, {2})})
                  .ok());
  ASSERT_TRUE(ShardAdmin(&*chief).SendChains(FixedRoutes::Chains(), SteadyClock().Now() + 2s).ok());
  auto worker = shards.Client(placement, kCluster);
  worker->RouteByChains(&routes);
  ASSERT_EQ(worker->max_pushes_in_flight(), 2u);
  std::vector<Tensor> values;
  ASSERT_TRUE(worker->Pull({1}, &values).ok());
  Tensor grad(DType::kFloat32, {2});
  const std::vector<Tensor> grads = {grad};
  GradientStreamer streamer(worker.get(), variables, {1}, 0);
  const auto step = [&] {
    streamer.StartStep(&grads, /*train_steps=*/1);
    streamer.Ready(0, 1);
    bool pulled = false;
    std::optional<std::string> diverged;
    StatusOr<PushSummary> summary = streamer.Finish(0.5f, &values, &pulled, &diverged);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return std::make_pair(summary.ok() ? summary->global_step : -2, pulled);
  };
  EXPECT_EQ(step(), std::make_pair(int64_t{-1}, true));  // push 1 sent
  EXPECT_EQ(step(), std::make_pair(int64_t{-1}, true));  // push 2 sent, 1 not collected yet
  // Push 1 says the end: push 2 is collected with it, nothing is sent.
  EXPECT_EQ(step(), std::make_pair(int64_t{2}, false));
  EXPECT_TRUE(worker->Pull({1}, &values).ok());  // nothing in flight
}

}  // namespace
}  // namespace pst
