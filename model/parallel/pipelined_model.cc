#include "model/parallel/pipelined_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>
#include <utility>

#include "model/layers/softmax_rows.h"
#include "model/validation.h"

namespace pst {
namespace {

std::vector<std::unique_ptr<ProgressCounter>> Counters(size_t n) {
  std::vector<std::unique_ptr<ProgressCounter>> counters;
  for (size_t i = 0; i < n; ++i) counters.push_back(std::make_unique<ProgressCounter>());
  return counters;
}

size_t CheckedSize(const std::vector<std::unique_ptr<PipelineStage>>& stages) {
  CHECK(!stages.empty()) << "a pipelined model needs a stage";
  return stages.size();
}

}  // namespace

PipelinedModel::PipelinedModel(std::vector<std::unique_ptr<PipelineStage>> stages,
                               int micro_batches)
    : stages_(std::move(stages)),
      micro_batches_(micro_batches),
      stage_params_(CheckedSize(stages_)),
      stage_grads_(stages_.size()),
      statuses_(stages_.size()),
      forward_done_(Counters(stages_.size())),
      backward_done_(Counters(stages_.size())),
      team_(static_cast<int>(stages_.size())) {
  CHECK_GE(micro_batches_, 1);
  for (size_t k = 0; k < stages_.size(); ++k) {
    const PipelineStage& stage = *stages_[k];
    CHECK_GE(stage.num_slots(), micro_batches_);
    if (k > 0) CHECK_EQ(stages_[k - 1]->out_dim(), stage.in_dim());
    first_variable_.push_back(variables_.size());
    variables_.insert(variables_.end(), stage.variables().begin(), stage.variables().end());
    device_ += (k == 0 ? "" : ",") + stage.device();
  }
  first_variable_.push_back(variables_.size());
}

std::vector<std::string> PipelinedModel::Placement() const {
  std::vector<std::string> lines;
  for (int k = 0; k < num_stages(); ++k) {
    for (const std::string& line : stages_[k]->Placement()) {
      lines.push_back("stage " + std::to_string(k) + ": " + line);
    }
  }
  return lines;
}

Status PipelinedModel::FirstError() const {
  for (int k = 0; k < num_stages(); ++k) {
    if (!statuses_[k].ok()) {
      return Status(statuses_[k].code(),
                    "stage " + std::to_string(k) + ": " + statuses_[k].message());
    }
  }
  return Status::OK();
}

Status PipelinedModel::Prepare(int64_t batch_size, const std::vector<Tensor>& params,
                               std::vector<Tensor>* grads) {
  const int64_t count = std::min<int64_t>(micro_batches_, batch_size);
  micro_rows_.assign(count, 0);
  micro_sizes_.assign(count, 0);
  micro_losses_.assign(count, 0);
  for (int64_t m = 0; m < count; ++m) {  // count > 0 unless batch_size is 0
    micro_sizes_[m] = batch_size / count + (m < batch_size % count ? 1 : 0);
    if (m > 0) micro_rows_[m] = micro_rows_[m - 1] + micro_sizes_[m - 1];
  }
  for (int k = 0; k < num_stages(); ++k) {
    const auto begin = static_cast<std::ptrdiff_t>(first_variable_[k]);
    const auto end = static_cast<std::ptrdiff_t>(first_variable_[k + 1]);
    stage_params_[k].assign(params.begin() + begin, params.begin() + end);
    if (grads != nullptr) stage_grads_[k].assign(grads->begin() + begin, grads->begin() + end);
    forward_done_[k]->Reset();
    backward_done_[k]->Reset();
  }
  team_.Run([&](int k) {
    statuses_[k] = stages_[k]->Reserve(batch_size, micro_sizes_, grads != nullptr);
  });
  return FirstError();
}

void PipelinedModel::RunStage(int k, const Batch& batch, Pass pass) {
  PipelineStage& stage = *stages_[k];
  const bool last = k + 1 == num_stages();
  const bool train = pass == Pass::kTrain;
  stage.SetParams(stage_params_[k]);
  if (train) stage.SetGrads(&stage_grads_[k]);
  if (last && pass != Pass::kPredict) stage.SetLabels(batch.labels.data(), batch.size);
  const float* input = k == 0 ? batch.features.data() : stages_[k - 1]->output();
  for (int m = 0; m < num_micro(); ++m) {
    if (k > 0) forward_done_[k - 1]->WaitFor(m + 1);
    stage.Forward(m, micro_rows_[m], micro_sizes_[m], input, train);
    if (last && train) micro_losses_[m] = stage.Loss(micro_rows_[m], micro_sizes_[m]);
    forward_done_[k]->Advance();
  }
  if (last && pass == Pass::kEvaluate) {
    eval_.count = batch.size;
    eval_.loss_sum = stage.LossSum(batch.size);
    eval_.correct = stage.CountCorrect(batch.size);
  }
  if (last && pass == Pass::kPredict) {
    logits_.resize(batch.size * num_classes());
    stage.CopyLogits(batch.size, logits_.data());
  }
  if (train) {
    for (int m = num_micro() - 1; m >= 0; --m) {
      if (!last) backward_done_[k + 1]->WaitFor(num_micro() - m);
      const float weight = static_cast<float>(static_cast<double>(micro_sizes_[m]) /
                                              static_cast<double>(batch.size));
      const float* dy = last ? nullptr : stages_[k + 1]->input_grad();
      stage.Backward(m, micro_rows_[m], micro_sizes_[m], dy, weight,
                     /*first=*/m == num_micro() - 1);
      backward_done_[k]->Advance();
    }
  }
  statuses_[k] = stage.TakeError();
}

StatusOr<float> PipelinedModel::ComputeGradients(const std::vector<Tensor>& params,
                                                 const Batch& batch, std::vector<Tensor>* grads) {
  CHECK(grads != nullptr);
  PST_RETURN_IF_ERROR(ValidateParams(params, variables_));
  PST_RETURN_IF_ERROR(ValidateBatch(batch, input_dim(), num_classes()));
  PST_RETURN_IF_ERROR(PrepareGrads(variables_, grads));
  PST_RETURN_IF_ERROR(Prepare(batch.size, params, grads));
  team_.Run([&](int k) { RunStage(k, batch, Pass::kTrain); });
  PST_RETURN_IF_ERROR(FirstError());
  double loss = 0;
  for (int m = 0; m < num_micro(); ++m) {
    loss += static_cast<double>(micro_losses_[m]) * static_cast<double>(micro_sizes_[m]) /
            static_cast<double>(batch.size);
  }
  return static_cast<float>(loss);
}

StatusOr<Model::EvalResult> PipelinedModel::Evaluate(const std::vector<Tensor>& params,
                                                     const Batch& batch) {
  PST_RETURN_IF_ERROR(ValidateParams(params, variables_));
  PST_RETURN_IF_ERROR(ValidateBatch(batch, input_dim(), num_classes()));
  PST_RETURN_IF_ERROR(Prepare(batch.size, params, /*grads=*/nullptr));
  team_.Run([&](int k) { RunStage(k, batch, Pass::kEvaluate); });
  PST_RETURN_IF_ERROR(FirstError());
  return eval_;
}

Status PipelinedModel::Predict(const std::vector<Tensor>& params, const Batch& batch,
                               std::vector<float>* probabilities) {
  PST_RETURN_IF_ERROR(ValidateParams(params, variables_));
  PST_RETURN_IF_ERROR(ValidateFeatures(batch, input_dim()));
  PST_RETURN_IF_ERROR(Prepare(batch.size, params, /*grads=*/nullptr));
  team_.Run([&](int k) { RunStage(k, batch, Pass::kPredict); });
  PST_RETURN_IF_ERROR(FirstError());
  probabilities->swap(logits_);
  SoftmaxRows(probabilities->data(), batch.size, num_classes());
  return Status::OK();
}

}  // namespace pst
