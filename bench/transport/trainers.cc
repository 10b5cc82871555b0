#include "bench/transport/trainers.h"

#include <numeric>
#include <utility>

#include "bench/check_ok.h"
#include "bench/transport/ps_settings.h"
#include "cluster/placement.h"
#include "model/model_zoo.h"

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
                               int ps_threads, ShmOptions shm, bool overlap)
    : ps_(ps_threads, kBenchClusterId),
      context_(1),
      transport_(context_, shm),
      overlap_(overlap),
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
  CheckOk(client_->Initialize(SgdConfig(), values), "initialize");
  // Model variables are 1..n of the placement's list (0 is the global step).
  variables_.resize(model_->variables().size());
  std::iota(variables_.begin(), variables_.end(), 1);
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
  if (overlap_) TakeWritableGradients(&grads_, &spare_grads_);
  StatusOr<float> loss = model_->ComputeGradients(params_, batch, &grads_);
  CheckOk(loss.status(), "ComputeGradients");
  pulled_ = true;
  if (overlap_) {
    global_step();  // the last step's push acknowledged
    CheckOk(client_->StartPushThenPull(variables_, grads_, true, variables_, &params_), "push");
    return *loss;
  }
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
