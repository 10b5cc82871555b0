#include "model/sequential_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/ensure_buffer.h"
#include "model/layers/softmax_rows.h"
#include "model/validation.h"

namespace pst {
namespace {

int64_t LastOutputDim(const std::vector<std::unique_ptr<Layer>>& layers) {
  CHECK(!layers.empty()) << "a model needs at least one layer";
  return layers.back()->out_dim();
}

std::vector<VariableSpec> AllVariables(const std::vector<std::unique_ptr<Layer>>& layers) {
  std::vector<VariableSpec> variables;
  for (const std::unique_ptr<Layer>& layer : layers) {
    for (VariableSpec& spec : layer->Variables()) {
      CHECK(spec.dtype == DType::kFloat32) << spec.name;
      variables.push_back(std::move(spec));
    }
  }
  return variables;
}

}  // namespace

SequentialModel::SequentialModel(std::unique_ptr<Kernels> kernels,
                                 std::vector<std::unique_ptr<Layer>> layers)
    : kernels_(std::move(kernels)),
      layers_(std::move(layers)),
      loss_(LastOutputDim(layers_), *kernels_),
      variables_(AllVariables(layers_)),
      io_(*kernels_, variables_, layers_.front()->in_dim()),
      activations_(layers_.size()),
      activation_grads_(layers_.size()) {
  size_t first = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (i > 0) CHECK_EQ(layers_[i - 1]->out_dim(), layers_[i]->in_dim());
    first_variable_.push_back(first);
    first += layers_[i]->Variables().size();
  }
}

std::vector<std::string> SequentialModel::Placement() const {
  const std::string on = " on " + device();
  std::vector<std::string> lines;
  for (const std::unique_ptr<Layer>& layer : layers_) {
    lines.push_back(layer->Describe() + on);
  }
  lines.push_back("softmax_cross_entropy (" + std::to_string(num_classes()) + " classes)" + on);
  return lines;
}

Status SequentialModel::Reserve(int64_t batch, bool backward) {
  PST_RETURN_IF_ERROR(io_.Reserve(batch, backward));
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t bytes = batch * layers_[i]->out_dim() * sizeof(float);
    PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, bytes, &activations_[i]));
    if (backward) {
      PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, bytes, &activation_grads_[i]));
    }
    PST_RETURN_IF_ERROR(layers_[i]->Reserve(batch));
  }
  return Status::OK();
}

const float* SequentialModel::Forward(int64_t batch, bool training) {
  const float* x = io_.features();
  for (size_t i = 0; i < layers_.size(); ++i) {
    float* y = activations_[i]->f32();
    layers_[i]->Forward(io_.params() + first_variable_[i], x, y, batch, training);
    x = y;
  }
  return x;
}

StatusOr<float> SequentialModel::ComputeGradients(const std::vector<Tensor>& params,
                                                  const Batch& batch, std::vector<Tensor>* grads) {
  return ComputeGradientsStreamed(params, batch, grads, nullptr);
}

StatusOr<float> SequentialModel::ComputeGradientsStreamed(const std::vector<Tensor>& params,
                                                          const Batch& batch,
                                                          std::vector<Tensor>* grads,
                                                          const GradientsReady& ready) {
  CHECK(grads != nullptr);
  PST_RETURN_IF_ERROR(ValidateParams(params, variables_));
  PST_RETURN_IF_ERROR(ValidateBatch(batch, input_dim(), num_classes()));
  PST_RETURN_IF_ERROR(PrepareGrads(variables_, grads));
  PST_RETURN_IF_ERROR(Reserve(batch.size, /*backward=*/true));
  io_.SetParams(params);
  io_.SetBatch(batch);
  io_.SetGrads(grads);

  const float* logits = Forward(batch.size, /*training=*/true);
  const float loss = loss_.Loss(logits, io_.labels(), activation_grads_.back()->f32(), batch.size);
  for (size_t i = layers_.size(); i-- > 0;) {
    const float* x = i == 0 ? io_.features() : activations_[i - 1]->f32();
    float* dx = i == 0 ? nullptr : activation_grads_[i - 1]->f32();
    layers_[i]->Backward(io_.params() + first_variable_[i], x, activations_[i]->f32(),
                         activation_grads_[i]->f32(), io_.grads() + first_variable_[i], dx,
                         batch.size);
    const size_t end = i + 1 < layers_.size() ? first_variable_[i + 1] : variables_.size();
    if (!ready || end == first_variable_[i]) continue;
    io_.FetchGrads(grads, first_variable_[i], end);
    // Nothing a failed kernel wrote may be reported.
    PST_RETURN_IF_ERROR(kernels_->TakeError());
    ready(static_cast<int>(first_variable_[i]), static_cast<int>(end));
  }
  if (!ready) io_.FetchGrads(grads, 0, variables_.size());
  PST_RETURN_IF_ERROR(kernels_->TakeError());
  return loss;
}

StatusOr<Model::EvalResult> SequentialModel::Evaluate(const std::vector<Tensor>& params,
                                                      const Batch& batch) {
  PST_RETURN_IF_ERROR(ValidateParams(params, variables_));
  PST_RETURN_IF_ERROR(ValidateBatch(batch, input_dim(), num_classes()));
  PST_RETURN_IF_ERROR(Reserve(batch.size, /*backward=*/false));
  io_.SetParams(params);
  io_.SetBatch(batch);

  const float* logits = Forward(batch.size, /*training=*/false);
  EvalResult result;
  result.count = batch.size;
  result.loss_sum = static_cast<double>(loss_.Loss(logits, io_.labels(),
                                                   /*dlogits=*/nullptr, batch.size)) *
                    static_cast<double>(batch.size);
  result.correct = loss_.CountCorrect(logits, io_.labels(), batch.size);
  PST_RETURN_IF_ERROR(kernels_->TakeError());
  return result;
}

Status SequentialModel::Predict(const std::vector<Tensor>& params, const Batch& batch,
                                std::vector<float>* probabilities) {
  PST_RETURN_IF_ERROR(ValidateParams(params, variables_));
  PST_RETURN_IF_ERROR(ValidateFeatures(batch, input_dim()));
  PST_RETURN_IF_ERROR(Reserve(batch.size, /*backward=*/false));
  io_.SetParams(params);
  io_.SetBatch(batch);  // labels, if any, are not read
  const float* logits = Forward(batch.size, /*training=*/false);
  const int64_t classes = num_classes();
  probabilities->resize(batch.size * classes);
  kernels_->CopyToHost(logits, probabilities->data(), probabilities->size() * sizeof(float));
  PST_RETURN_IF_ERROR(kernels_->TakeError());
  SoftmaxRows(probabilities->data(), batch.size, classes);
  return Status::OK();
}

}  // namespace pst
