#include "bench/transport/trainers.h"

#include <glog/logging.h>

#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "bench/check_ok.h"
#include "bench/transport/ps_settings.h"
#include "cluster/placement.h"
#include "model/zoo/model_zoo.h"
#include "ps/shard_admin.h"

namespace pst {
namespace {

std::unique_ptr<Model> MustMakeModel(const std::string& name) {
  StatusOr<std::unique_ptr<Model>> model = MakeModel(name);
  CheckOk(model.status(), "MakeModel");
  return std::move(model).value();
}

}  // namespace

float Trainer::Run(const std::vector<Batch>& batches, int64_t steps) {
  float loss = 0;
  for (int64_t i = 0; i < steps; ++i) {
    loss = Step(batches[cursor_ % batches.size()]);
    ++cursor_;
  }
  return loss;
}

ClusterTrainer::ClusterTrainer(const std::string& model_name, const std::vector<Tensor>& initial,
                               int ps_threads, ShmOptions shm,
                               std::optional<int64_t> overlap_bucket_bytes)
    : ps_(ps_threads, kBenchClusterId),
      context_(NamedZmqContext(kClientZmqThreadPrefix)),
      transport_(context_, shm),
      model_(MustMakeModel(model_name)) {
  PlacementOptions placement_options;
  placement_options.num_shards = 1;
  StatusOr<Placement> placement =
      Placement::Compute(WithGlobalStep(model_->variables()), placement_options);
  CheckOk(placement.status(), "placement");
  client_ = std::make_unique<PsClient>(transport_, ps_.Cluster(), std::move(placement).value(),
                                       BenchIdentity());
  std::vector<Tensor> values = {Tensor(DType::kInt64, {})};  // global step 0
  for (const Tensor& t : initial) values.push_back(t.Clone());
  CheckOk(ShardAdmin(&*client_).Initialize(SgdConfig(), values), "initialize");
  spare_grads_.resize(client_->max_pushes_in_flight());
  // Model variables are 1..n of the placement's list (0 is the global step).
  variables_.resize(model_->variables().size());
  std::iota(variables_.begin(), variables_.end(), 1);
  if (overlap_bucket_bytes) {
    streamer_ = std::make_unique<GradientStreamer>(client_.get(), model_->variables(), variables_,
                                                   *overlap_bucket_bytes);
  }
}

ClusterTrainer::~ClusterTrainer() {
  if (client_) CheckOk(client_->FinishPush().status(), "push");
  client_.reset();
}

int64_t ClusterTrainer::global_step() {
  StatusOr<std::optional<PushSummary>> acked = client_->FinishPush();
  CheckOk(acked.status(), "push");
  if (acked->has_value()) global_step_ = (*acked)->global_step;
  return global_step_;
}

float ClusterTrainer::Step(const Batch& batch) {
  if (!pulled_) CheckOk(client_->Pull(variables_, &params_), "pull");
  pulled_ = true;
  if (streamer_) {
    TakeWritableGradients(&grads_, &spare_grads_);
    streamer_->StartStep(&grads_, std::numeric_limits<int64_t>::max());
    const StatusOr<float> loss = model_->ComputeGradientsStreamed(
        params_, batch, &grads_, [this](int first, int end) { streamer_->Ready(first, end); });
    bool pulled = false;
    std::optional<std::string> diverged;
    StatusOr<PushSummary> acked = streamer_->Finish(loss, &params_, &pulled, &diverged);
    CheckOk(acked.status(), "push");
    CHECK(pulled && !diverged) << diverged.value_or("");
    if (acked->global_step >= 0) global_step_ = acked->global_step;
    return *loss;
  }
  StatusOr<float> loss = model_->ComputeGradients(params_, batch, &grads_);
  CheckOk(loss.status(), "ComputeGradients");
  StatusOr<PushSummary> pushed =
      client_->PushThenPull(variables_, grads_, true, variables_, &params_);
  CheckOk(pushed.status(), "push");
  global_step_ = pushed->global_step;
  return *loss;
}

LocalTrainer::LocalTrainer(const std::string& model_name, const std::vector<Tensor>& initial)
    : model_(MustMakeModel(model_name)) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(SgdConfig().optimizer);
  CheckOk(optimizer.status(), "MakeOptimizer");
  optimizer_ = std::move(optimizer).value();
  for (const Tensor& t : initial) {
    params_.push_back(t.Clone());
    slots_.push_back(optimizer_->CreateSlots(t.num_elements()));
  }
}

float LocalTrainer::Step(const Batch& batch) {
  StatusOr<float> loss = model_->ComputeGradients(params_, batch, &grads_);
  CheckOk(loss.status(), "ComputeGradients");
  for (size_t i = 0; i < params_.size(); ++i) {
    optimizer_->Apply(params_[i].f32(), grads_[i].f32(), params_[i].num_elements(), 1.0f,
                      &slots_[i]);
  }
  return *loss;
}

}  // namespace pst
