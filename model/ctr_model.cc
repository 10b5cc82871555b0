#include "model/ctr_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "model/ctr/interactions.h"

namespace pst {
namespace {

constexpr char kDeepTable[] = "deep/embedding";
constexpr char kWideTable[] = "wide/weights";
constexpr uint64_t kDropoutSeed = 7001;

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

const char* CombinerName(Combiner c) {
  switch (c) {
    case Combiner::kSum: return "sum";
    case Combiner::kMean: return "mean";
    case Combiner::kSqrtN: return "sqrtn";
  }
  return "?";
}

bool Positive(const std::vector<int64_t>& units) {
  return std::all_of(units.begin(), units.end(), [](int64_t u) { return u >= 1; });
}

Status CheckConfig(const CtrModelConfig& c) {
  if (c.num_fields < 1) {
    return InvalidArgument(
        "a click model needs sparse features (criteo, libsvm or libffm data); this data has none");
  }
  if (c.dense_features < 0 || c.embedding_dim < 1 || c.table_rows < 0) {
    return InvalidArgument("a click model needs embedding dim >= 1 and table rows >= 0");
  }
  if (!Positive(c.hidden) || !Positive(c.bottom)) {
    return InvalidArgument("a click model's dense layers need >= 1 unit");
  }
  if (!c.field_combiners.empty() && static_cast<int>(c.field_combiners.size()) != c.num_fields) {
    return InvalidArgument(std::to_string(c.field_combiners.size()) + " combiners for " +
                           std::to_string(c.num_fields) + " fields");
  }
  if (!(c.dropout >= 0 && c.dropout < 1)) {
    return InvalidArgument("a click model's dropout rate must be in [0, 1)");
  }
  if (c.cross_layers < 0 || c.cross_rank < 0) {
    return InvalidArgument("cross layers and their rank must be >= 0");
  }
  if (c.cross_parallel && (c.cross_layers == 0 || c.hidden.empty())) {
    return InvalidArgument("parallel cross layers need cross layers and hidden dense layers");
  }
  if (c.dot) {
    if (c.fm || c.cross_layers > 0) {
      return InvalidArgument("the dot interaction (dlrm) does not go with fm or cross layers");
    }
    if (c.dense_features > 0 && (c.bottom.empty() || c.bottom.back() != c.embedding_dim)) {
      return InvalidArgument(
          "the dot interaction (dlrm) takes the dense features through bottom layers whose last "
          "has the embedding dim (" +
          std::to_string(c.embedding_dim) + ")");
    }
    if (c.dense_features == 0 && c.num_fields < 2) {
      return InvalidArgument(
          "the dot interaction (dlrm) needs two vectors: two fields or dense "
          "features");
    }
  } else if (!c.bottom.empty()) {
    return InvalidArgument("bottom layers go with the dot interaction (dlrm) only");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<CtrModel>> CtrModel::Create(const CtrModelConfig& config,
                                                     const KernelsOptions& options) {
  PST_RETURN_IF_ERROR(CheckConfig(config));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> kernels, MakeKernels("cpu", options));
  return std::unique_ptr<CtrModel>(new CtrModel(config, std::move(kernels)));
}

CtrModel::CtrModel(const CtrModelConfig& config, std::unique_ptr<Kernels> kernels)
    : config_(config), kernels_(std::move(kernels)) {
  const int64_t d = config.dense_features, e = config.embedding_dim;
  deep_width_ = d + config.num_fields * e;
  MlpOptions mlp;
  mlp.hidden = config.hidden;
  mlp.output = 1;
  mlp.batchnorm = config.batchnorm;
  mlp.dropout = config.dropout;
  if (config.dot) {
    vectors_ = config.num_fields + (d > 0 ? 1 : 0);
    mlp_ = std::make_unique<Mlp>("", (d > 0 ? e : 0) + DotPairs(vectors_), mlp, kDropoutSeed,
                                 *kernels_);
  } else if (config.cross_parallel) {
    mlp.output = 0;
    mlp_ = std::make_unique<Mlp>("", deep_width_, mlp, kDropoutSeed, *kernels_);
    head_ = std::make_unique<Mlp>("head/", deep_width_ + mlp_->out_dim(), MlpOptions{{}, 1},
                                  kDropoutSeed, *kernels_);
  } else {
    mlp_ = std::make_unique<Mlp>("", deep_width_, mlp, kDropoutSeed, *kernels_);
  }
  mlp_vars_ = AddVariables(mlp_->variables());
  if (head_) head_vars_ = AddVariables(head_->variables());
  if (config.cross_layers > 0) {
    cross_ = std::make_unique<CrossNetwork>(deep_width_, config.cross_layers, config.cross_rank,
                                            *kernels_);
    cross_vars_ = AddVariables(cross_->variables());
  }
  if (config.dot && d > 0) {
    MlpOptions bottom;
    bottom.hidden = config.bottom;
    bottom.batchnorm = config.batchnorm;
    bottom_ = std::make_unique<Mlp>("bottom/", d, bottom, kDropoutSeed + 100, *kernels_);
    bottom_vars_ = AddVariables(bottom_->variables());
  }
  tables_.push_back({kDeepTable, e, config.table_rows});
  if (config.wide) tables_.push_back({kWideTable, 1, config.table_rows});
}

size_t CtrModel::AddVariables(const std::vector<VariableSpec>& specs) {
  const size_t first = variables_.size();
  variables_.insert(variables_.end(), specs.begin(), specs.end());
  return first;
}

std::vector<std::string> CtrModel::Placement() const {
  std::vector<std::string> lines;
  std::string combiners = CombinerName(config_.combiner);
  if (!config_.field_combiners.empty()) {
    combiners.clear();
    for (Combiner c : config_.field_combiners) {
      combiners += (combiners.empty() ? "" : ",") + std::string(CombinerName(c));
    }
  }
  for (const EmbeddingTableSpec& t : tables_) {
    lines.push_back(t.name + " (embedding [" +
                    (t.rows > 0 ? std::to_string(t.rows) : std::string("dynamic")) + " x " +
                    std::to_string(t.dim) + "], " + combiners + ") on cpu");
  }
  const auto add = [&](const std::vector<std::string>& parts, const std::string& prefix) {
    for (const std::string& line : parts) lines.push_back(prefix + line + " on " + device());
  };
  if (bottom_) add(bottom_->Describe(), "bottom: ");
  if (config_.dot)
    lines.push_back("dot interaction (" + std::to_string(vectors_) + " vectors) on cpu");
  if (config_.fm)
    lines.push_back("fm interaction (" + std::to_string(config_.num_fields) + " fields) on cpu");
  if (cross_) add(cross_->Describe(), "");
  add(mlp_->Describe(), "");
  if (head_) add(head_->Describe(), "");
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

void CtrModel::Pool(const float* rows, const Batch& batch, const std::vector<int32_t>& slots) {
  const int64_t b = batch.size, e = config_.embedding_dim;
  const int fields = config_.num_fields;
  fields_.assign(b * fields * e, 0.0f);
  divisor_.assign(b * fields, 0.0f);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
      const int f = batch.sparse_fields[j];
      const float v = batch.sparse_values[j];
      const float* row = rows + static_cast<int64_t>(slots[j]) * e;
      float* out = fields_.data() + (i * fields + f) * e;
      for (int64_t c = 0; c < e; ++c) out[c] += v * row[c];
      const Combiner combiner =
          config_.field_combiners.empty() ? config_.combiner : config_.field_combiners[f];
      divisor_[i * fields + f] += combiner == Combiner::kSqrtN ? v * v : v;
    }
  }
  for (int f = 0; f < fields; ++f) {
    const Combiner combiner =
        config_.field_combiners.empty() ? config_.combiner : config_.field_combiners[f];
    for (int64_t i = 0; i < b; ++i) {
      float& w = divisor_[i * fields + f];
      if (combiner == Combiner::kSum || w == 0.0f) {
        w = 1.0f;  // an empty field stays zeros
        continue;
      }
      if (combiner == Combiner::kSqrtN) w = std::sqrt(w);
      float* out = fields_.data() + (i * fields + f) * e;
      for (int64_t c = 0; c < e; ++c) out[c] /= w;
    }
  }
}

void CtrModel::Forward(const std::vector<Tensor>& params, const Batch& batch,
                       const std::vector<int32_t>& slots, bool training) {
  const int64_t b = batch.size, d = config_.dense_features, e = config_.embedding_dim;
  const int64_t fe = config_.num_fields * e;
  params_.resize(variables_.size());
  for (size_t i = 0; i < variables_.size(); ++i) params_[i] = params[i].f32();
  Pool(params[variables_.size()].f32(), batch, slots);
  if (config_.dot) {
    // vectors: [bottom(dense)], then the fields'.
    const int64_t pairs = DotPairs(vectors_), top = (d > 0 ? e : 0) + pairs;
    vectors_in_.resize(b * vectors_ * e);
    if (bottom_)
      bottom_->Forward(params_.data() + bottom_vars_, batch.features.data(), b, training);
    for (int64_t i = 0; i < b; ++i) {
      float* v = vectors_in_.data() + i * vectors_ * e;
      if (bottom_) v = std::copy(bottom_->output() + i * e, bottom_->output() + (i + 1) * e, v);
      std::copy(fields_.begin() + i * fe, fields_.begin() + (i + 1) * fe, v);
    }
    top_input_.resize(b * top);
    std::vector<float>& dots = part_grad_;  // scratch until Backward
    dots.resize(b * pairs);
    DotForward(vectors_in_.data(), b, vectors_, e, dots.data());
    for (int64_t i = 0; i < b; ++i) {
      float* t = top_input_.data() + i * top;
      if (bottom_) t = std::copy(bottom_->output() + i * e, bottom_->output() + (i + 1) * e, t);
      std::copy(dots.begin() + i * pairs, dots.begin() + (i + 1) * pairs, t);
    }
    mlp_->Forward(params_.data() + mlp_vars_, top_input_.data(), b, training);
    logits_.assign(mlp_->output(), mlp_->output() + b);
  } else {
    deep_input_.resize(b * deep_width_);
    for (int64_t i = 0; i < b; ++i) {
      float* x = deep_input_.data() + i * deep_width_;
      x = std::copy(batch.features.begin() + i * d, batch.features.begin() + (i + 1) * d, x);
      std::copy(fields_.begin() + i * fe, fields_.begin() + (i + 1) * fe, x);
    }
    const float* mlp_input = deep_input_.data();
    if (cross_) {
      cross_->Forward(params_.data() + cross_vars_, deep_input_.data(), b);
      if (!head_) mlp_input = cross_->output();
    }
    mlp_->Forward(params_.data() + mlp_vars_, mlp_input, b, training);
    if (head_) {
      const int64_t h = mlp_->out_dim(), w = deep_width_ + h;
      top_input_.resize(b * w);
      for (int64_t i = 0; i < b; ++i) {
        float* t = top_input_.data() + i * w;
        t = std::copy(cross_->output() + i * deep_width_, cross_->output() + (i + 1) * deep_width_,
                      t);
        std::copy(mlp_->output() + i * h, mlp_->output() + (i + 1) * h, t);
      }
      head_->Forward(params_.data() + head_vars_, top_input_.data(), b, training);
      logits_.assign(head_->output(), head_->output() + b);
    } else {
      logits_.assign(mlp_->output(), mlp_->output() + b);
    }
    if (config_.fm) {
      std::vector<float>& fm = part_grad_;  // scratch until Backward
      fm.resize(b);
      FmForward(fields_.data(), b, config_.num_fields, e, fm.data());
      for (int64_t i = 0; i < b; ++i) logits_[i] += fm[i];
    }
  }
  if (config_.wide) {
    const float* wide_rows = params[variables_.size() + 1].f32();
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
        logits_[i] += batch.sparse_values[j] * wide_rows[slots[j]];
      }
    }
  }
}

void CtrModel::Backward(const Batch& batch, float* const* grads) {
  const int64_t b = batch.size, d = config_.dense_features, e = config_.embedding_dim;
  const int64_t fe = config_.num_fields * e;
  field_grads_.assign(b * fe, 0.0f);
  if (config_.dot) {
    const int64_t pairs = DotPairs(vectors_), top = (d > 0 ? e : 0) + pairs;
    top_input_grad_.resize(b * top);
    mlp_->Backward(params_.data() + mlp_vars_, top_input_.data(), dlogit_.data(), grads + mlp_vars_,
                   top_input_grad_.data(), b);
    std::vector<float>& ddots = part_grad_;
    ddots.resize(b * pairs);
    for (int64_t i = 0; i < b; ++i) {
      const float* t = top_input_grad_.data() + i * top + (d > 0 ? e : 0);
      std::copy(t, t + pairs, ddots.begin() + i * pairs);
    }
    vectors_grad_.assign(b * vectors_ * e, 0.0f);
    DotBackward(vectors_in_.data(), ddots.data(), b, vectors_, e, vectors_grad_.data());
    std::vector<float> dbottom;
    if (bottom_) dbottom.resize(b * e);
    for (int64_t i = 0; i < b; ++i) {
      const float* v = vectors_grad_.data() + i * vectors_ * e;
      if (bottom_) {
        const float* t = top_input_grad_.data() + i * top;
        for (int64_t c = 0; c < e; ++c) dbottom[i * e + c] = t[c] + v[c];
        v += e;
      }
      std::copy(v, v + fe, field_grads_.begin() + i * fe);
    }
    if (bottom_) {
      bottom_->Backward(params_.data() + bottom_vars_, batch.features.data(), dbottom.data(),
                        grads + bottom_vars_, nullptr, b);
    }
    return;
  }
  deep_input_grad_.resize(b * deep_width_);
  const float* dmlp_out = dlogit_.data();
  if (head_) {
    const int64_t h = mlp_->out_dim(), w = deep_width_ + h;
    top_input_grad_.resize(b * w);
    head_->Backward(params_.data() + head_vars_, top_input_.data(), dlogit_.data(),
                    grads + head_vars_, top_input_grad_.data(), b);
    part_grad_.resize(b * h);  // the MLP's output's gradient
    for (int64_t i = 0; i < b; ++i) {
      const float* t = top_input_grad_.data() + i * w + deep_width_;
      std::copy(t, t + h, part_grad_.begin() + i * h);
    }
    dmlp_out = part_grad_.data();
  }
  const float* mlp_input = cross_ && !head_ ? cross_->output() : deep_input_.data();
  std::vector<float>& dmlp_in = vectors_grad_;  // scratch
  dmlp_in.resize(b * deep_width_);
  mlp_->Backward(params_.data() + mlp_vars_, mlp_input, dmlp_out, grads + mlp_vars_, dmlp_in.data(),
                 b);
  if (cross_) {
    std::vector<float>& dcross_out = dmlp_in;
    if (head_) {  // the cross output's gradient comes from the head
      const int64_t w = deep_width_ + mlp_->out_dim();
      std::vector<float> from_head(b * deep_width_);
      for (int64_t i = 0; i < b; ++i) {
        const float* t = top_input_grad_.data() + i * w;
        std::copy(t, t + deep_width_, from_head.begin() + i * deep_width_);
      }
      cross_->Backward(params_.data() + cross_vars_, deep_input_.data(), from_head.data(),
                       grads + cross_vars_, deep_input_grad_.data(), b);
      for (int64_t n = 0; n < b * deep_width_; ++n) deep_input_grad_[n] += dmlp_in[n];
    } else {
      cross_->Backward(params_.data() + cross_vars_, deep_input_.data(), dcross_out.data(),
                       grads + cross_vars_, deep_input_grad_.data(), b);
    }
  } else {
    deep_input_grad_.assign(dmlp_in.begin(), dmlp_in.end());
  }
  for (int64_t i = 0; i < b; ++i) {
    const float* g = deep_input_grad_.data() + i * deep_width_ + d;
    std::copy(g, g + fe, field_grads_.begin() + i * fe);
  }
  if (config_.fm)
    FmBackward(fields_.data(), dlogit_.data(), b, config_.num_fields, e, field_grads_.data());
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
  const int64_t b = batch.size, e = config_.embedding_dim;
  const int64_t n = static_cast<int64_t>(ids.size());
  double loss = 0;
  dlogit_.resize(b);
  for (int64_t i = 0; i < b; ++i) {
    loss += LogLoss(logits_[i], batch.labels[i]);
    dlogit_[i] = (Probability(logits_[i]) - batch.labels[i]) / static_cast<float>(b);
  }
  grads->resize(variables_.size() + tables_.size());
  std::vector<float*> dense_grads(variables_.size());
  for (size_t i = 0; i < variables_.size(); ++i) {
    if ((*grads)[i].shape() != variables_[i].shape) {
      (*grads)[i] = Tensor(DType::kFloat32, variables_[i].shape);
    }
    dense_grads[i] = (*grads)[i].f32();
  }
  Backward(batch, dense_grads.data());
  // Row gradients: each entry's share of its field vector's gradient,
  // summed per row (the worker pushes one row per id).
  Tensor deep_grad(DType::kFloat32, {n, e});
  Tensor wide_grad(DType::kFloat32, {n, 1});
  const int fields = config_.num_fields;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
      const int f = batch.sparse_fields[j];
      const float scale = batch.sparse_values[j] / divisor_[i * fields + f];
      const float* g = field_grads_.data() + (i * fields + f) * e;
      float* row = deep_grad.f32() + static_cast<int64_t>(slots[j]) * e;
      for (int64_t c = 0; c < e; ++c) row[c] += scale * g[c];
      wide_grad.f32()[slots[j]] += batch.sparse_values[j] * dlogit_[i];
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
