#include "model/validation.h"

#include <string>

namespace pst {
namespace {

std::string Describe(DType dtype, const Shape& shape) {
  return std::string(DTypeName(dtype)) + " " + ShapeToString(shape);
}

// OK when `tensors` matches `specs` one for one in dtype and shape. `what`
// names the list in the message ("parameter", "gradient").
Status CheckTensorsMatch(const std::vector<Tensor>& tensors, const std::vector<VariableSpec>& specs,
                         const char* what) {
  if (tensors.size() != specs.size()) {
    return InvalidArgument("the model has " + std::to_string(specs.size()) + " variables, got " +
                           std::to_string(tensors.size()) + " " + what + " tensors");
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dtype() != specs[i].dtype || t.shape() != specs[i].shape || t.empty()) {
      return InvalidArgument(std::string(what) + " " + std::to_string(i) + " (" + specs[i].name +
                             "): expected " + Describe(specs[i].dtype, specs[i].shape) + ", got " +
                             Describe(t.dtype(), t.shape()));
    }
  }
  return Status::OK();
}

}  // namespace

Status ValidateParams(const std::vector<Tensor>& params,
                      const std::vector<VariableSpec>& variables) {
  return CheckTensorsMatch(params, variables, "parameter");
}

Status ValidateBatch(const Batch& batch, int64_t input_dim, int64_t num_classes) {
  if (batch.size <= 0) {
    return InvalidArgument("empty batch (size " + std::to_string(batch.size) + ")");
  }
  if (batch.feature_dim != input_dim) {
    return InvalidArgument("batch feature_dim is " + std::to_string(batch.feature_dim) +
                           ", the model takes " + std::to_string(input_dim));
  }
  if (static_cast<int64_t>(batch.features.size()) != batch.size * batch.feature_dim ||
      static_cast<int64_t>(batch.labels.size()) != batch.size) {
    return InvalidArgument("batch of " + std::to_string(batch.size) + " x " +
                           std::to_string(batch.feature_dim) + " holds " +
                           std::to_string(batch.features.size()) + " features and " +
                           std::to_string(batch.labels.size()) + " labels");
  }
  for (int64_t i = 0; i < batch.size; ++i) {
    if (batch.labels[i] < 0 || batch.labels[i] >= num_classes) {
      return InvalidArgument("label " + std::to_string(batch.labels[i]) + " of example " +
                             std::to_string(i) + " is outside [0, " + std::to_string(num_classes) +
                             ")");
    }
  }
  return Status::OK();
}

Status ValidateFeatures(const Batch& batch, int64_t input_dim) {
  if (batch.feature_dim != input_dim ||
      static_cast<int64_t>(batch.features.size()) != batch.size * batch.feature_dim) {
    return InvalidArgument("batch of " + std::to_string(batch.size) + " x " +
                           std::to_string(batch.feature_dim) + " features for a model of input " +
                           std::to_string(input_dim));
  }
  return Status::OK();
}

Status PrepareGrads(const std::vector<VariableSpec>& variables, std::vector<Tensor>* grads) {
  if (grads->empty()) {
    grads->reserve(variables.size());
    for (const VariableSpec& spec : variables) {
      grads->emplace_back(spec.dtype, spec.shape);
    }
    return Status::OK();
  }
  return CheckTensorsMatch(*grads, variables, "gradient");
}

}  // namespace pst
