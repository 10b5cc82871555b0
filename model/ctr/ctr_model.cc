#include "model/ctr/ctr_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/ctr/interactions.h"
#include "model/ctr/row_slots.h"

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

// Every field's dim when they are all one (0 when they differ).
int64_t CommonDim(const CtrModelConfig& c) {
  if (c.field_dims.empty()) return c.embedding_dim;
  for (int64_t d : c.field_dims) {
    if (d != c.field_dims[0]) return 0;
  }
  return c.field_dims[0];
}

// The per-field dims and key ranges: one a field, dims >= 1, the ranges
// (needed by fixed tables of several dims) inside the key space; fm and
// dot take one dim.
Status CheckFieldDims(const CtrModelConfig& c) {
  if (c.field_dims.empty()) {
    return c.field_ranges.empty() ? Status::OK()
                                  : InvalidArgument("key ranges per field need dims per field");
  }
  if (static_cast<int>(c.field_dims.size()) != c.num_fields) {
    return InvalidArgument(std::to_string(c.field_dims.size()) + " embedding dims for " +
                           std::to_string(c.num_fields) + " fields");
  }
  for (size_t f = 0; f < c.field_dims.size(); ++f) {
    if (c.field_dims[f] < 1) {
      return InvalidArgument("field " + std::to_string(f) + "'s embedding dim must be >= 1");
    }
    if ((c.fm || c.dot) && c.field_dims[f] != c.field_dims[0]) {
      return InvalidArgument(std::string(c.fm ? "fm" : "the dot interaction (dlrm)") +
                             " needs one embedding dim for every field: field " +
                             std::to_string(f) + " has " + std::to_string(c.field_dims[f]) +
                             ", field 0 " + std::to_string(c.field_dims[0]));
    }
  }
  if (c.table_rows == 0 || CommonDim(c) > 0) return Status::OK();
  if (static_cast<int>(c.field_ranges.size()) != c.num_fields) {
    return InvalidArgument("fixed tables of several embedding dims need every field's key range");
  }
  for (const KeyRange& r : c.field_ranges) {
    if (r.offset < 0 || r.rows < 1 || r.rows > c.table_rows - r.offset) {
      return InvalidArgument("key range [" + std::to_string(r.offset) + ", +" +
                             std::to_string(r.rows) + ") is outside the " +
                             std::to_string(c.table_rows) + " table rows");
    }
  }
  return Status::OK();
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
  PST_RETURN_IF_ERROR(CheckFieldDims(c));
  if (c.dot) {
    if (c.fm || c.cross_layers > 0) {
      return InvalidArgument("the dot interaction (dlrm) does not go with fm or cross layers");
    }
    if (c.dense_features > 0 && (c.bottom.empty() || c.bottom.back() != CommonDim(c))) {
      return InvalidArgument(
          "the dot interaction (dlrm) takes the dense features through bottom layers whose last "
          "has the embedding dim (" +
          std::to_string(CommonDim(c)) + ")");
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
  LayOutTables();
  const int64_t d = config.dense_features, e = field_dim_[0];  // dot: every field's dim
  deep_width_ = d + field_width_;
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
}

void CtrModel::LayOutTables() {
  const CtrModelConfig& c = config_;
  field_dim_ =
      c.field_dims.empty() ? std::vector<int64_t>(c.num_fields, c.embedding_dim) : c.field_dims;
  // Deep tables in the order of their dims' first fields: the first one
  // keeps its old name, then the wide table, then the others.
  std::vector<int64_t> dims;
  for (int64_t dim : field_dim_) {
    if (std::find(dims.begin(), dims.end(), dim) == dims.end()) dims.push_back(dim);
  }
  deep_tables_ = static_cast<int>(dims.size());
  const bool ranged = c.table_rows > 0 && deep_tables_ > 1;
  std::vector<int64_t> rows(dims.size(), ranged ? 0 : c.table_rows);
  std::vector<std::vector<std::pair<KeyRange, int64_t>>> bases(dims.size());  // range, first row
  for (int f = 0; f < c.num_fields; ++f) {
    const size_t t = std::find(dims.begin(), dims.end(), field_dim_[f]) - dims.begin();
    field_table_.push_back(t == 0 ? 0 : static_cast<int64_t>(t) + (c.wide ? 1 : 0));
    field_at_.push_back(field_width_);
    field_width_ += field_dim_[f];
    if (!ranged) continue;
    const KeyRange& range = c.field_ranges[f];
    auto known = std::find_if(bases[t].begin(), bases[t].end(),
                              [&](const auto& b) { return b.first == range; });
    if (known == bases[t].end()) {
      known = bases[t].insert(bases[t].end(), {range, rows[t]});
      rows[t] += range.rows;
    }
    field_base_.push_back(known->second);
  }
  tables_.push_back({kDeepTable, dims[0], rows[0]});
  if (c.wide) {
    wide_table_ = 1;
    tables_.push_back({kWideTable, 1, c.table_rows});
  }
  for (size_t t = 1; t < dims.size(); ++t) {
    tables_.push_back(
        {std::string(kDeepTable) + "_dim" + std::to_string(dims[t]), dims[t], rows[t]});
  }
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

int64_t CtrModel::DeepRow(int f, int64_t id) const {
  if (field_base_.empty()) return id;
  const KeyRange& range = config_.field_ranges[f];
  return field_base_[f] + RowIdOf(id - range.offset, range.rows);
}

void CtrModel::FindRows(const Batch& batch, TableRowIds* ids, Slots* slots) const {
  const size_t n = batch.sparse_keys.size();
  ids->assign(tables_.size(), {});
  // A field out of range goes to table 0 here; Check refuses the batch.
  const auto table_of = [&](int f) {
    return f >= 0 && f < config_.num_fields ? field_table_[f] : 0;
  };
  std::vector<size_t> entries(tables_.size(), 0);
  for (const int f : batch.sparse_fields) ++entries[table_of(f)];
  std::vector<RowSlots> slot_of;
  slot_of.reserve(tables_.size());
  for (size_t t = 0; t < tables_.size(); ++t) slot_of.emplace_back(entries[t]);
  slots->deep.resize(n);
  for (size_t j = 0; j < n; ++j) {
    const int64_t id = RowIdOf(batch.sparse_keys[j], config_.table_rows);
    const int f = batch.sparse_fields[j];
    const bool known = f >= 0 && f < config_.num_fields;
    const int64_t t = table_of(f);
    const int64_t row = known ? DeepRow(f, id) : id;
    const auto [slot, added] = slot_of[t].Insert(row);
    if (added) (*ids)[t].push_back(row);
    slots->deep[j] = slot;
  }
  if (wide_table_ < 0) return;
  if (deep_tables_ == 1) {  // one row id list serves both tables
    (*ids)[wide_table_] = (*ids)[0];
    slots->wide = slots->deep;
    return;
  }
  std::vector<int64_t>& wide_ids = (*ids)[wide_table_];
  RowSlots wide_slot_of(n);
  slots->wide.resize(n);
  for (size_t j = 0; j < n; ++j) {
    const int64_t id = RowIdOf(batch.sparse_keys[j], config_.table_rows);
    const auto [slot, added] = wide_slot_of.Insert(id);
    if (added) wide_ids.push_back(id);
    slots->wide[j] = slot;
  }
}

TableRowIds CtrModel::RowIds(const Batch& batch) const {
  TableRowIds ids;
  Slots slots;
  FindRows(batch, &ids, &slots);
  return ids;
}

Status CtrModel::Check(const std::vector<Tensor>& params, const Batch& batch,
                       const TableRowIds& ids) const {
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
    const Shape expected = {static_cast<int64_t>(ids[t].size()), tables_[t].dim};
    if (rows.shape() != expected || rows.dtype() != DType::kFloat32) {
      return InvalidArgument("rows of table '" + tables_[t].name + "' are " +
                             ShapeToString(rows.shape()) + ", the batch needs " +
                             ShapeToString(expected));
    }
  }
  return Status::OK();
}

void CtrModel::Pool(const std::vector<Tensor>& params, const Batch& batch, const Slots& slots) {
  const int64_t b = batch.size, w = field_width_;
  const int fields = config_.num_fields;
  fields_.assign(b * w, 0.0f);
  divisor_.assign(b * fields, 0.0f);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
      const int f = batch.sparse_fields[j];
      const int64_t e = field_dim_[f];
      const float v = batch.sparse_values[j];
      const float* row = params[variables_.size() + field_table_[f]].f32() +
                         static_cast<int64_t>(slots.deep[j]) * e;
      float* out = fields_.data() + i * w + field_at_[f];
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
      float& divisor = divisor_[i * fields + f];
      if (combiner == Combiner::kSum || divisor == 0.0f) {
        divisor = 1.0f;  // an empty field stays zeros
        continue;
      }
      if (combiner == Combiner::kSqrtN) divisor = std::sqrt(divisor);
      float* out = fields_.data() + i * w + field_at_[f];
      for (int64_t c = 0; c < field_dim_[f]; ++c) out[c] /= divisor;
    }
  }
}

void CtrModel::Forward(const std::vector<Tensor>& params, const Batch& batch, const Slots& slots,
                       bool training) {
  // e: fm's and dot's vectors' dim (every field's then); fe: a row of fields_.
  const int64_t b = batch.size, d = config_.dense_features, e = field_dim_[0];
  const int64_t fe = field_width_;
  params_.resize(variables_.size());
  for (size_t i = 0; i < variables_.size(); ++i) params_[i] = params[i].f32();
  Pool(params, batch, slots);
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
  if (wide_table_ >= 0) {
    const float* wide_rows = params[variables_.size() + wide_table_].f32();
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
        logits_[i] += batch.sparse_values[j] * wide_rows[slots.wide[j]];
      }
    }
  }
}

void CtrModel::Backward(const Batch& batch, float* const* grads) {
  const int64_t b = batch.size, d = config_.dense_features, e = field_dim_[0];
  const int64_t fe = field_width_;
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
  TableRowIds ids;
  Slots slots;
  FindRows(batch, &ids, &slots);
  PST_RETURN_IF_ERROR(Check(params, batch, ids));
  for (int32_t label : batch.labels) {
    if (label != 0 && label != 1) return InvalidArgument("a click label must be 0 or 1");
  }
  Forward(params, batch, slots, /*training=*/true);
  const int64_t b = batch.size;
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
  std::vector<float*> row_grads(tables_.size());
  for (size_t t = 0; t < tables_.size(); ++t) {
    Tensor& g = (*grads)[variables_.size() + t];
    g = Tensor(DType::kFloat32, {static_cast<int64_t>(ids[t].size()), tables_[t].dim});
    row_grads[t] = g.f32();
  }
  const int fields = config_.num_fields;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = batch.sparse_offsets[i]; j < batch.sparse_offsets[i + 1]; ++j) {
      const int f = batch.sparse_fields[j];
      const int64_t e = field_dim_[f];
      const float scale = batch.sparse_values[j] / divisor_[i * fields + f];
      const float* g = field_grads_.data() + i * field_width_ + field_at_[f];
      float* row = row_grads[field_table_[f]] + static_cast<int64_t>(slots.deep[j]) * e;
      for (int64_t c = 0; c < e; ++c) row[c] += scale * g[c];
      if (wide_table_ >= 0)
        row_grads[wide_table_][slots.wide[j]] += batch.sparse_values[j] * dlogit_[i];
    }
  }
  return static_cast<float>(loss / b);
}

bool CtrModel::LastTrainingProbabilities(std::vector<float>* out) const {
  out->resize(logits_.size());
  for (size_t i = 0; i < logits_.size(); ++i) (*out)[i] = Probability(logits_[i]);
  return true;
}

StatusOr<Model::EvalResult> CtrModel::Evaluate(const std::vector<Tensor>& params,
                                               const Batch& batch) {
  TableRowIds ids;
  Slots slots;
  FindRows(batch, &ids, &slots);
  PST_RETURN_IF_ERROR(Check(params, batch, ids));
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
  TableRowIds ids;
  Slots slots;
  FindRows(batch, &ids, &slots);
  PST_RETURN_IF_ERROR(Check(params, batch, ids));
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
