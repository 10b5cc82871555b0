#include "model/sequential_model.h"

#include <glog/logging.h>

#include <string>
#include <utility>

namespace pst {
namespace {

std::string Describe(DType dtype, const Shape& shape) {
  return std::string(DTypeName(dtype)) + " " + ShapeToString(shape);
}

// OK when `tensors` matches `specs` one for one in dtype and shape. `what`
// names the list in the message ("parameter", "gradient").
Status CheckTensorsMatch(const std::vector<Tensor>& tensors,
                         const std::vector<VariableSpec>& specs,
                         const char* what) {
  if (tensors.size() != specs.size()) {
    return InvalidArgument("the model has " + std::to_string(specs.size()) +
                           " variables, got " + std::to_string(tensors.size()) +
                           " " + what + " tensors");
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dtype() != specs[i].dtype || t.shape() != specs[i].shape ||
        t.empty()) {
      return InvalidArgument(std::string(what) + " " + std::to_string(i) +
                             " (" + specs[i].name + "): expected " +
                             Describe(specs[i].dtype, specs[i].shape) +
                             ", got " + Describe(t.dtype(), t.shape()));
    }
  }
  return Status::OK();
}

int64_t LastOutputDim(const std::vector<std::unique_ptr<Layer>>& layers) {
  CHECK(!layers.empty()) << "a model needs at least one layer";
  return layers.back()->out_dim();
}

}  // namespace

SequentialModel::SequentialModel(std::unique_ptr<Kernels> kernels,
                                 std::vector<std::unique_ptr<Layer>> layers)
    : kernels_(std::move(kernels)),
      layers_(std::move(layers)),
      loss_(LastOutputDim(layers_), *kernels_),
      activations_(layers_.size()),
      activation_grads_(layers_.size()) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (i > 0) CHECK_EQ(layers_[i - 1]->out_dim(), layers_[i]->in_dim());
    first_variable_.push_back(variables_.size());
    for (VariableSpec& spec : layers_[i]->Variables()) {
      CHECK(spec.dtype == DType::kFloat32) << spec.name;
      variables_.push_back(std::move(spec));
    }
  }
  param_ptrs_.resize(variables_.size());
  grad_ptrs_.resize(variables_.size());
}

Status SequentialModel::ValidateParams(
    const std::vector<Tensor>& params) const {
  return CheckTensorsMatch(params, variables_, "parameter");
}

Status SequentialModel::ValidateBatch(const Batch& batch) const {
  if (batch.size <= 0) {
    return InvalidArgument("empty batch (size " + std::to_string(batch.size) +
                           ")");
  }
  if (batch.feature_dim != input_dim()) {
    return InvalidArgument("batch feature_dim is " +
                           std::to_string(batch.feature_dim) +
                           ", the model takes " + std::to_string(input_dim()));
  }
  if (static_cast<int64_t>(batch.features.size()) !=
          batch.size * batch.feature_dim ||
      static_cast<int64_t>(batch.labels.size()) != batch.size) {
    return InvalidArgument("batch of " + std::to_string(batch.size) + " x " +
                           std::to_string(batch.feature_dim) + " holds " +
                           std::to_string(batch.features.size()) +
                           " features and " +
                           std::to_string(batch.labels.size()) + " labels");
  }
  for (int64_t i = 0; i < batch.size; ++i) {
    if (batch.labels[i] < 0 || batch.labels[i] >= num_classes()) {
      return InvalidArgument("label " + std::to_string(batch.labels[i]) +
                             " of example " + std::to_string(i) +
                             " is outside [0, " +
                             std::to_string(num_classes()) + ")");
    }
  }
  return Status::OK();
}

Status SequentialModel::AllocateOrCheckGrads(std::vector<Tensor>* grads) const {
  if (grads->empty()) {
    grads->reserve(variables_.size());
    for (const VariableSpec& spec : variables_) {
      grads->emplace_back(spec.dtype, spec.shape);
    }
    return Status::OK();
  }
  return CheckTensorsMatch(*grads, variables_, "gradient");
}

void SequentialModel::Prepare(const std::vector<Tensor>& params,
                              int64_t batch_size, bool backward) {
  for (size_t i = 0; i < params.size(); ++i) param_ptrs_[i] = params[i].f32();
  for (size_t i = 0; i < layers_.size(); ++i) {
    // resize() keeps the capacity, so alternating batch sizes (a short last
    // batch) do not reallocate either.
    const size_t n = batch_size * layers_[i]->out_dim();
    activations_[i].resize(n);
    if (backward) activation_grads_[i].resize(n);
  }
}

const float* SequentialModel::Forward(const Batch& batch, bool training) {
  const float* x = batch.features.data();
  for (size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->Forward(param_ptrs_.data() + first_variable_[i], x,
                        activations_[i].data(), batch.size, training);
    x = activations_[i].data();
  }
  return x;
}

StatusOr<float> SequentialModel::ComputeGradients(
    const std::vector<Tensor>& params, const Batch& batch,
    std::vector<Tensor>* grads) {
  CHECK(grads != nullptr);
  PST_RETURN_IF_ERROR(ValidateParams(params));
  PST_RETURN_IF_ERROR(ValidateBatch(batch));
  PST_RETURN_IF_ERROR(AllocateOrCheckGrads(grads));
  Prepare(params, batch.size, /*backward=*/true);
  for (size_t i = 0; i < grads->size(); ++i) grad_ptrs_[i] = (*grads)[i].f32();

  const float* logits = Forward(batch, /*training=*/true);
  const float loss = loss_.Loss(logits, batch.labels.data(),
                                activation_grads_.back().data(), batch.size);
  for (size_t i = layers_.size(); i-- > 0;) {
    const float* x =
        i == 0 ? batch.features.data() : activations_[i - 1].data();
    float* dx = i == 0 ? nullptr : activation_grads_[i - 1].data();
    layers_[i]->Backward(param_ptrs_.data() + first_variable_[i], x,
                         activations_[i].data(), activation_grads_[i].data(),
                         grad_ptrs_.data() + first_variable_[i], dx,
                         batch.size);
  }
  return loss;
}

StatusOr<Model::EvalResult> SequentialModel::Evaluate(
    const std::vector<Tensor>& params, const Batch& batch) {
  PST_RETURN_IF_ERROR(ValidateParams(params));
  PST_RETURN_IF_ERROR(ValidateBatch(batch));
  Prepare(params, batch.size, /*backward=*/false);

  const float* logits = Forward(batch, /*training=*/false);
  EvalResult result;
  result.count = batch.size;
  result.loss_sum =
      static_cast<double>(loss_.Loss(logits, batch.labels.data(),
                                     /*dlogits=*/nullptr, batch.size)) *
      static_cast<double>(batch.size);
  result.correct = loss_.CountCorrect(logits, batch.labels.data(), batch.size);
  return result;
}

}  // namespace pst
