#include "model/ctr_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "model/activations.h"
#include "model/dense.h"

namespace pst {
namespace {

constexpr char kDeepTable[] = "deep/embedding";
constexpr char kWideTable[] = "wide/weights";

// A key's row id: key mod rows for a fixed table (the remainder taken with
// the divisor's sign, in [0, rows), as ONNX's integer Mod computes it, so
// an exported graph maps keys the same way), the key for a dynamic one.
int64_t RowIdOf(int64_t key, int64_t rows) {
  if (rows == 0) return key;
  const int64_t r = key % rows;
  return r < 0 ? r + rows : r;
}

// The mean log-loss term of one example from its logit z, computed stably.
double LogLoss(float z, int32_t label) {
  return std::max(z, 0.0f) - z * label + std::log1p(std::exp(-std::fabs(z)));
}

float Probability(float z) { return 1.0f / (1.0f + std::exp(-z)); }

}  // namespace

CtrModelConfig WideDeepConfig(int64_t dense_features, int num_fields, int64_t table_rows) {
  CtrModelConfig config;
  config.dense_features = dense_features;
  config.num_fields = num_fields;
  config.table_rows = table_rows;
  return config;
}

StatusOr<std::unique_ptr<CtrModel>> CtrModel::Create(const CtrModelConfig& config,
                                                     const KernelsOptions& options) {
  if (config.num_fields < 1) {
    return InvalidArgument(
        "a click model needs sparse features (criteo or libsvm data); this data has none");
  }
  if (config.dense_features < 0 || config.embedding_dim < 1 || config.table_rows < 0) {
    return InvalidArgument("a click model needs embedding dim >= 1 and table rows >= 0");
  }
  for (int64_t units : config.hidden) {
    if (units < 1) return InvalidArgument("a click model's dense layers need >= 1 unit");
  }
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> kernels, MakeKernels("cpu", options));
  return std::unique_ptr<CtrModel>(new CtrModel(config, std::move(kernels)));
}

CtrModel::CtrModel(const CtrModelConfig& config, std::unique_ptr<Kernels> kernels)
    : config_(config), kernels_(std::move(kernels)) {
  deep_width_ = config.dense_features + config.num_fields * config.embedding_dim;
  int64_t in = deep_width_;
  std::vector<int64_t> units = config.hidden;
  units.push_back(1);  // the logit
  for (size_t i = 0; i < units.size(); ++i) {
    layers_.push_back(
        std::make_unique<Dense>("dense" + std::to_string(i), in, units[i], *kernels_));
    if (i + 1 < units.size()) layers_.push_back(std::make_unique<Relu>(units[i], *kernels_));
    in = units[i];
  }
  for (const std::unique_ptr<Layer>& layer : layers_) {
    first_variable_.push_back(variables_.size());
    for (VariableSpec& spec : layer->Variables()) variables_.push_back(std::move(spec));
  }
  tables_.push_back({kDeepTable, config.embedding_dim, config.table_rows});
  if (config.wide) tables_.push_back({kWideTable, 1, config.table_rows});
  activations_.resize(layers_.size());
  activation_grads_.resize(layers_.size());
}

std::vector<std::string> CtrModel::Placement() const {
  std::vector<std::string> lines;
  for (const EmbeddingTableSpec& t : tables_) {
    lines.push_back(t.name + " (embedding [" +
                    (t.rows > 0 ? std::to_string(t.rows) : std::string("dynamic")) + " x " +
                    std::to_string(t.dim) + "], " + (config_.mean_combiner ? "mean" : "sum") +
                    ") on cpu");
  }
  for (const std::unique_ptr<Layer>& layer : layers_) {
    lines.push_back(layer->Describe() + " on " + device());
  }
  lines.push_back("sigmoid_cross_entropy on " + device());
  return lines;
}

std::vector<int32_t> CtrModel::RowSlots(const Batch& batch, std::vector<int64_t>* ids) const {
  std::unordered_map<int64_t, int32_t> slot_of;
  slot_of.reserve(batch.sparse_keys.size());
  std::vector<int32_t> slots(batch.sparse_keys.size());
  for (size_t j = 0; j < batch.sparse_keys.size(); ++j) {
    const int64_t id = RowIdOf(batch.sparse_keys[j], config_.table_rows);
    auto [it, added] = slot_of.emplace(id, static_cast<int32_t>(ids->size()));
    if (added) ids->push_back(id);
    slots[j] = it->second;
  }
  return slots;
}

std::vector<int64_t> CtrModel::RowIds(const Batch& batch) const {
  std::vector<int64_t> ids;
  RowSlots(batch, &ids);
  return ids;
}

Status CtrModel::Check(const std::vector<Tensor>& params, const Batch& batch,
                       size_t num_rows) const {
  if (batch.feature_dim != config_.dense_features || batch.num_fields != config_.num_fields) {
    return InvalidArgument("batch has " + std::to_string(batch.feature_dim) +
                           " dense features and " + std::to_string(batch.num_fields) +
                           " fields; the model takes " + std::to_string(config_.dense_features) +
                           " and " + std::to_string(config_.num_fields));
  }
  if (static_cast<int64_t>(batch.sparse_offsets.size()) != batch.size + 1 ||
      batch.sparse_offsets.back() != static_cast<int64_t>(batch.sparse_keys.size()) ||
      batch.sparse_fields.size() != batch.sparse_keys.size() ||
      batch.sparse_values.size() != batch.sparse_keys.size() ||
      static_cast<int64_t>(batch.features.size()) != batch.size * batch.feature_dim) {
    return InvalidArgument("batch's sparse features do not match its size");
  }
  for (int32_t f : batch.sparse_fields) {
    if (f < 0 || f >= config_.num_fields) {
      return InvalidArgument("batch has an entry of field " + std::to_string(f));
    }
  }
  if (params.size() != variables_.size() + tables_.size()) {
    return InvalidArgument(std::to_string(params.size()) + " parameter tensors for " +
                           std::to_string(variables_.size()) + " variables and " +
                           std::to_string(tables_.size()) + " tables");
  }
  for (size_t i = 0; i < variables_.size(); ++i) {
    if (params[i].shape() != variables_[i].shape || params[i].dtype() != DType::kFloat32) {
      return InvalidArgument("parameter '" + variables_[i].name + "' is " +
                             ShapeToString(params[i].shape()) + ", expected " +
                             ShapeToString(variables_[i].shape));
    }
  }
  for (size_t t = 0; t < tables_.size(); ++t) {
    const Tensor& rows = params[variables_.size() + t];
    const Shape expected = {static_cast<int64_t>(num_rows), tables_[t].dim};
    if (rows.shape() != expected || rows.dtype() != DType::kFloat32) {
      return InvalidArgument("rows of table '" + tables_[t].name + "' are " +
                             ShapeToString(rows.shape()) + ", the batch needs " +
                             ShapeToString(expected));
    }
  }
  return Status::OK();
}

void CtrModel::Forward(const std::vector<Tensor>& params, const Batch& batch,
                       const std::vector<int32_t>& slots, bool training) {
  const int64_t b = batch.size, d = config_.dense_features, e = config_.embedding_dim;
  const int fields = config_.num_fields;
  deep_input_.assign(b * deep_width_, 0.0f);
  for (int64_t i = 0; i < b; ++i) {
    std::copy(batch.features.begin() + i * d, batch.features.begin() + (i + 1) * d,
              deep_input_.begin() + i * deep_width_);
  }
  const float* deep_rows = params[variables_.size()].f32();
  if (config_.mean_combiner) field_weight_.assign(b * fields, 0.0f);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
      const int f = batch.sparse_fields[j];
      const float v = batch.sparse_values[j];
      const float* row = deep_rows + static_cast<int64_t>(slots[j]) * e;
      float* out = deep_input_.data() + i * deep_width_ + d + f * e;
      for (int64_t c = 0; c < e; ++c) out[c] += v * row[c];
      if (config_.mean_combiner) field_weight_[i * fields + f] += v;
    }
    if (config_.mean_combiner) {
      for (int f = 0; f < fields; ++f) {
        const float w = field_weight_[i * fields + f];
        if (w == 0.0f) continue;
        float* out = deep_input_.data() + i * deep_width_ + d + f * e;
        for (int64_t c = 0; c < e; ++c) out[c] /= w;
      }
    }
  }
  std::vector<const float*> dense_params(variables_.size());
  for (size_t i = 0; i < variables_.size(); ++i) dense_params[i] = params[i].f32();
  const float* x = deep_input_.data();
  for (size_t i = 0; i < layers_.size(); ++i) {
    CHECK(layers_[i]->Reserve(b).ok());  // the CPU's allocations do not fail short of a crash
    activations_[i].resize(b * layers_[i]->out_dim());
    layers_[i]->Forward(dense_params.data() + first_variable_[i], x, activations_[i].data(), b,
                        training);
    x = activations_[i].data();
  }
  logits_.assign(x, x + b);
  if (config_.wide) {
    const float* wide_rows = params[variables_.size() + 1].f32();
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
        logits_[i] += batch.sparse_values[j] * wide_rows[slots[j]];
      }
    }
  }
}

StatusOr<float> CtrModel::ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                           std::vector<Tensor>* grads) {
  std::vector<int64_t> ids;
  const std::vector<int32_t> slots = RowSlots(batch, &ids);
  PST_RETURN_IF_ERROR(Check(params, batch, ids.size()));
  for (int32_t label : batch.labels) {
    if (label != 0 && label != 1) return InvalidArgument("a click label must be 0 or 1");
  }
  Forward(params, batch, slots, /*training=*/true);
  const int64_t b = batch.size, d = config_.dense_features, e = config_.embedding_dim;
  const int64_t n = static_cast<int64_t>(ids.size());
  double loss = 0;
  std::vector<float>& dlogit = activation_grads_.back();
  dlogit.resize(b);
  for (int64_t i = 0; i < b; ++i) {
    loss += LogLoss(logits_[i], batch.labels[i]);
    dlogit[i] = (Probability(logits_[i]) - batch.labels[i]) / static_cast<float>(b);
  }
  grads->resize(variables_.size() + tables_.size());
  for (size_t i = 0; i < variables_.size(); ++i) {
    if ((*grads)[i].shape() != variables_[i].shape) {
      (*grads)[i] = Tensor(DType::kFloat32, variables_[i].shape);
    }
  }
  std::vector<const float*> dense_params(variables_.size());
  std::vector<float*> dense_grads(variables_.size());
  for (size_t i = 0; i < variables_.size(); ++i) {
    dense_params[i] = params[i].f32();
    dense_grads[i] = (*grads)[i].f32();
  }
  input_grad_.resize(b * deep_width_);
  for (size_t i = layers_.size(); i-- > 0;) {
    if (i > 0) activation_grads_[i - 1].resize(b * layers_[i]->in_dim());
    const float* x = i == 0 ? deep_input_.data() : activations_[i - 1].data();
    float* dx = i == 0 ? input_grad_.data() : activation_grads_[i - 1].data();
    layers_[i]->Backward(dense_params.data() + first_variable_[i], x, activations_[i].data(),
                         activation_grads_[i].data(), dense_grads.data() + first_variable_[i], dx,
                         b);
  }
  // Row gradients: each entry's share of its field's input gradient, summed
  // per row (the worker pushes one row per id).
  Tensor deep_grad(DType::kFloat32, {n, e});
  Tensor wide_grad(DType::kFloat32, {n, 1});
  const int fields = config_.num_fields;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
      const int f = batch.sparse_fields[j];
      float scale = batch.sparse_values[j];
      if (config_.mean_combiner) scale /= field_weight_[i * fields + f];
      const float* g = input_grad_.data() + i * deep_width_ + d + f * e;
      float* row = deep_grad.f32() + static_cast<int64_t>(slots[j]) * e;
      for (int64_t c = 0; c < e; ++c) row[c] += scale * g[c];
      wide_grad.f32()[slots[j]] += batch.sparse_values[j] * dlogit[i];
    }
  }
  (*grads)[variables_.size()] = std::move(deep_grad);
  if (config_.wide) (*grads)[variables_.size() + 1] = std::move(wide_grad);
  return static_cast<float>(loss / b);
}

StatusOr<Model::EvalResult> CtrModel::Evaluate(const std::vector<Tensor>& params,
                                               const Batch& batch) {
  std::vector<int64_t> ids;
  const std::vector<int32_t> slots = RowSlots(batch, &ids);
  PST_RETURN_IF_ERROR(Check(params, batch, ids.size()));
  Forward(params, batch, slots, /*training=*/false);
  EvalResult result;
  for (int64_t i = 0; i < batch.size; ++i) {
    result.loss_sum += LogLoss(logits_[i], batch.labels[i]);
    result.correct += (logits_[i] >= 0.0f) == (batch.labels[i] == 1);
  }
  result.count = batch.size;
  return result;
}

Status CtrModel::Predict(const std::vector<Tensor>& params, const Batch& batch,
                         std::vector<float>* probabilities) {
  std::vector<int64_t> ids;
  const std::vector<int32_t> slots = RowSlots(batch, &ids);
  PST_RETURN_IF_ERROR(Check(params, batch, ids.size()));
  Forward(params, batch, slots, /*training=*/false);
  probabilities->resize(2 * batch.size);
  for (int64_t i = 0; i < batch.size; ++i) {
    const float p = Probability(logits_[i]);
    (*probabilities)[2 * i] = 1.0f - p;
    (*probabilities)[2 * i + 1] = p;
  }
  return Status::OK();
}

}  // namespace pst
