#include "job/model_file.h"

#include <map>

#include "common/tensor_file.h"
#include "model/ctr/ctr_model.h"
#include "model/ctr/ctr_spec.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

constexpr int64_t kModelFileVersion = 1;
constexpr char kPrefix[] = "@model/";

Tensor Int64s(const std::vector<int64_t>& values, bool scalar) {
  Tensor t(DType::kInt64, scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.i64()[i] = values[i];
  return t;
}

Tensor Floats(const std::vector<float>& values) {
  Tensor t(DType::kFloat32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.f32()[i] = values[i];
  return t;
}

// The values of entry `name` of `entries`; empty when it is missing or of
// another dtype.
std::vector<int64_t> Int64Values(const std::map<std::string, Tensor>& entries,
                                 const std::string& name) {
  const auto it = entries.find(name);
  if (it == entries.end() || it->second.dtype() != DType::kInt64) return {};
  const Tensor& t = it->second;
  return std::vector<int64_t>(t.i64(), t.i64() + t.num_elements());
}

std::vector<float> FloatValues(const std::map<std::string, Tensor>& entries,
                               const std::string& name) {
  const auto it = entries.find(name);
  if (it == entries.end() || it->second.dtype() != DType::kFloat32) return {};
  const Tensor& t = it->second;
  return std::vector<float>(t.f32(), t.f32() + t.num_elements());
}

// The zoo model whose variables are `variables` (names and shapes, in
// order) for this input and class count.
StatusOr<std::string> IdentifyModel(const std::string& path, const NamedTensors& variables,
                                    const std::vector<std::string>& candidates,
                                    const InputShape& input, int num_classes) {
  for (const std::string& name : candidates) {
    if (!CheckModelTakes(name, input, num_classes).ok()) continue;
    PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, MakeModel(name, input, num_classes));
    const std::vector<VariableSpec>& specs = model->variables();
    bool same = specs.size() == variables.size();
    for (size_t i = 0; same && i < specs.size(); ++i) {
      same = specs[i].name == variables[i].first && specs[i].shape == variables[i].second.shape();
    }
    if (same) return name;
  }
  return FailedPrecondition(path + ": its variables match no model of this pstrain for " +
                            input.ToString() + " and " + std::to_string(num_classes) + " classes");
}

// InvalidArgument naming the file unless `keys` (of `table`) are strictly
// ascending int64s.
Status CheckTableKeys(const std::string& where, const std::string& table, const Tensor& keys) {
  if (keys.dtype() != DType::kInt64 || keys.shape().size() != 1) {
    return InvalidArgument(where + ": the keys of table '" + table + "' are not int64 [n]");
  }
  for (int64_t i = 1; i < keys.num_elements(); ++i) {
    if (keys.i64()[i - 1] >= keys.i64()[i]) {
      return InvalidArgument(where + ": the keys of table '" + table +
                             "' are not strictly ascending at " + std::to_string(i));
    }
  }
  return Status::OK();
}

// The keys and row defaults of a click model's dynamic tables.
StatusOr<DynamicTables> ReadDynamicTables(const std::string& path,
                                          const std::map<std::string, Tensor>& entries,
                                          const Model& model) {
  DynamicTables dynamic;
  const std::vector<int64_t> rows = Int64Values(entries, "click_dynamic_rows");
  const std::vector<float> scale = FloatValues(entries, "click_init_scale");
  if (rows.size() != 2 || rows[0] < 1 || scale.size() != 1) {
    return FailedPrecondition(path +
                              ": a click model with dynamic tables needs "
                              "@model/click_dynamic_rows and @model/click_init_scale");
  }
  dynamic.min_count = rows[0];
  dynamic.seed = static_cast<uint64_t>(rows[1]);
  dynamic.init_scale = scale[0];
  for (const EmbeddingTableSpec& spec : model.tables()) {
    const auto it = entries.find("table_keys/" + spec.name);
    if (it == entries.end()) {
      return FailedPrecondition(path + ": no @model/table_keys/" + spec.name);
    }
    if (Status s = CheckTableKeys(path, spec.name, it->second); !s.ok()) {
      return FailedPrecondition(s.message());
    }
    dynamic.keys.push_back(it->second);
  }
  return dynamic;
}

// A click model's entries: its variables and whole tables, checked against
// the model its name, fields and table rows make.
StatusOr<TrainedModel> ReadClickModel(const std::string& path, const std::string& name,
                                      const std::map<std::string, Tensor>& entries,
                                      NamedTensors tensors, TrainedModel trained) {
  const std::vector<int64_t> fields = Int64Values(entries, "click_fields");
  const std::vector<int64_t> rows = Int64Values(entries, "click_table_rows");
  if (fields.size() != 1 || rows.size() != 1 || rows[0] < 0) {
    return FailedPrecondition(path + ": a click model file needs its fields and table rows");
  }
  trained.model = name;
  trained.click_model = true;
  trained.num_fields = static_cast<int>(fields[0]);
  trained.table_rows = rows[0];
  const std::vector<int64_t> dim = Int64Values(entries, "click_embedding_dim");
  if (dim.size() > 1 || (dim.size() == 1 && dim[0] < 1)) {
    return FailedPrecondition(path + ": its @model/click_embedding_dim is not a dim");
  }
  if (!dim.empty()) trained.embedding_dim = dim[0];
  const std::vector<int64_t> features = Int64Values(entries, "click_features");
  trained.features_text = std::string(features.begin(), features.end());
  trained.field_dims = Int64Values(entries, "click_field_dims");
  const std::vector<int64_t> ranges = Int64Values(entries, "click_field_ranges");
  if (ranges.size() % 2 != 0) {
    return FailedPrecondition(path + ": its @model/click_field_ranges holds an odd count");
  }
  for (size_t i = 0; i < ranges.size(); i += 2) {
    trained.field_ranges.push_back({ranges[i], ranges[i + 1]});
  }
  for (const int64_t c : Int64Values(entries, "click_field_combiners")) {
    if (c < 0 || c > static_cast<int64_t>(Combiner::kSqrtN)) {
      return FailedPrecondition(path + ": its @model/click_field_combiners holds " +
                                std::to_string(c) + ", no combiner");
    }
    trained.field_combiners.push_back(static_cast<Combiner>(c));
  }
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, MakeTrainedModel(trained));
  if (trained.table_rows == 0) {
    PST_ASSIGN_OR_RETURN(trained.dynamic, ReadDynamicTables(path, entries, *model));
  }
  std::vector<std::pair<std::string, Shape>> expected;
  for (const VariableSpec& v : model->variables()) expected.emplace_back(v.name, v.shape);
  for (size_t t = 0; t < model->tables().size(); ++t) {
    const EmbeddingTableSpec& spec = model->tables()[t];
    const int64_t rows =
        trained.table_rows > 0 ? spec.rows : trained.dynamic.keys[t].num_elements();
    expected.emplace_back(spec.name, Shape{rows, spec.dim});
  }
  bool same = expected.size() == tensors.size();
  for (size_t i = 0; same && i < expected.size(); ++i) {
    same = expected[i].first == tensors[i].first &&
           expected[i].second == tensors[i].second.shape() &&
           tensors[i].second.dtype() == DType::kFloat32;
  }
  if (!same) return FailedPrecondition(path + ": its tensors do not fit click model " + name);
  for (auto& [tensor_name, tensor] : tensors) trained.params.push_back(std::move(tensor));
  return trained;
}

// A click model's dynamic tables' entries: each table's keys, and how a key
// it lacks reads.
Status AddDynamicTables(const std::string& path, const Model& model,
                        const std::vector<Tensor>& params, const DynamicTables& dynamic,
                        NamedTensors* tensors) {
  const std::vector<EmbeddingTableSpec>& specs = model.tables();
  if (dynamic.keys.size() != specs.size()) {
    return InvalidArgument(path + ": " + std::to_string(dynamic.keys.size()) + " key lists for " +
                           std::to_string(specs.size()) + " dynamic tables");
  }
  const std::string prefix = kPrefix;
  for (size_t t = 0; t < specs.size(); ++t) {
    PST_RETURN_IF_ERROR(CheckTableKeys(path, specs[t].name, dynamic.keys[t]));
    const size_t at = model.variables().size() + t;
    if (at >= params.size() || params[at].shape().empty() ||
        params[at].shape()[0] != dynamic.keys[t].num_elements()) {
      return InvalidArgument(path + ": table '" + specs[t].name + "' has " +
                             std::to_string(dynamic.keys[t].num_elements()) +
                             " keys but not as many rows");
    }
    tensors->emplace_back(prefix + "table_keys/" + specs[t].name, dynamic.keys[t]);
  }
  tensors->emplace_back(prefix + "click_dynamic_rows",
                        Int64s({dynamic.min_count, static_cast<int64_t>(dynamic.seed)}, false));
  tensors->emplace_back(prefix + "click_init_scale", Floats({dynamic.init_scale}));
  return Status::OK();
}

}  // namespace

TrainedModel TrainedModelOf(const Job& job, std::vector<Tensor> params, DynamicTables dynamic) {
  TrainedModel trained;
  trained.model = job.model;
  trained.input = job.input;
  trained.num_classes = job.num_classes;
  trained.standardization = job.data.standardization;
  trained.params = std::move(params);
  trained.click_model = job.click_model;
  trained.num_fields = job.num_fields;
  trained.table_rows = job.table_rows;
  trained.dynamic = std::move(dynamic);
  if (job.click_model && job.features) {
    const StatusOr<CtrModelConfig> config = JobClickModelConfig(job);
    CHECK(config.ok()) << config.status().ToString();  // LoadJob made it
    if (job.features->embedding_dim > 0) trained.embedding_dim = config->embedding_dim;
    trained.field_combiners = config->field_combiners;
    trained.field_dims = config->field_dims;
    trained.field_ranges = config->field_ranges;
    trained.features_text = job.features_text;
  }
  return trained;
}

StatusOr<std::unique_ptr<Model>> MakeTrainedModel(const TrainedModel& trained) {
  if (!trained.click_model) return MakeModel(trained.model, trained.input, trained.num_classes);
  PST_ASSIGN_OR_RETURN(CtrModelConfig config,
                       ClickModelConfig(trained.model, trained.input.size(), trained.num_fields,
                                        trained.table_rows));
  if (trained.embedding_dim > 0) config.embedding_dim = trained.embedding_dim;
  config.field_combiners = trained.field_combiners;
  config.field_dims = trained.field_dims;
  config.field_ranges = trained.field_ranges;
  PST_ASSIGN_OR_RETURN(std::unique_ptr<CtrModel> model, CtrModel::Create(config));
  return std::unique_ptr<Model>(std::move(model));
}

Status WriteModelFile(const std::string& path, const Job& job, const Model& model,
                      const std::vector<Tensor>& params, const DynamicTables& dynamic) {
  NamedTensors tensors;
  const size_t variables = model.variables().size();
  for (size_t i = 0; i < params.size(); ++i) {
    tensors.emplace_back(
        i < variables ? model.variables()[i].name : model.tables()[i - variables].name, params[i]);
  }
  const std::string prefix = kPrefix;
  if (job.click_model) {
    tensors.emplace_back(prefix + "click_fields", Int64s({job.num_fields}, true));
    tensors.emplace_back(prefix + "click_table_rows", Int64s({job.table_rows}, true));
    tensors.emplace_back(prefix + "click_model",
                         Int64s(std::vector<int64_t>(job.model.begin(), job.model.end()), false));
    // Only with --features: files of runs without it are as before.
    const TrainedModel trained = TrainedModelOf(job, {});
    if (trained.embedding_dim > 0) {
      tensors.emplace_back(prefix + "click_embedding_dim", Int64s({trained.embedding_dim}, true));
    }
    if (!trained.field_combiners.empty()) {
      std::vector<int64_t> combiners;
      for (const Combiner c : trained.field_combiners) combiners.push_back(static_cast<int64_t>(c));
      tensors.emplace_back(prefix + "click_field_combiners", Int64s(combiners, false));
    }
    if (!trained.field_dims.empty()) {
      tensors.emplace_back(prefix + "click_field_dims", Int64s(trained.field_dims, false));
    }
    if (!trained.field_ranges.empty()) {
      std::vector<int64_t> ranges;
      for (const KeyRange& r : trained.field_ranges)
        ranges.insert(ranges.end(), {r.offset, r.rows});
      tensors.emplace_back(prefix + "click_field_ranges", Int64s(ranges, false));
    }
    if (job.features) {
      const std::string& text = job.features_text;
      tensors.emplace_back(prefix + "click_features",
                           Int64s(std::vector<int64_t>(text.begin(), text.end()), false));
    }
    if (job.table_rows == 0)
      PST_RETURN_IF_ERROR(AddDynamicTables(path, model, params, dynamic, &tensors));
  }
  tensors.emplace_back(prefix + "version", Int64s({kModelFileVersion}, true));
  tensors.emplace_back(prefix + "input_shape", Int64s(job.input.dims(), false));
  tensors.emplace_back(prefix + "classes", Int64s({job.num_classes}, true));
  if (IsSpecModel(job.model)) {  // the spec's text, one byte an element
    const std::string text = job.model;
    tensors.emplace_back(prefix + "spec",
                         Int64s(std::vector<int64_t>(text.begin(), text.end()), false));
  }
  if (job.data.standardization) {
    tensors.emplace_back(prefix + "standardize_mean", Floats(job.data.standardization->mean));
    tensors.emplace_back(prefix + "standardize_scale", Floats(job.data.standardization->scale));
  }
  return WriteTensorFile(path, tensors).status();
}

StatusOr<TrainedModel> ReadModelFile(const std::string& path) {
  PST_ASSIGN_OR_RETURN(NamedTensors tensors, ReadTensorFile(path));
  NamedTensors variables;
  std::map<std::string, Tensor> entries;
  for (auto& [name, tensor] : tensors) {
    if (name.rfind(kPrefix, 0) == 0) {
      entries[name.substr(sizeof(kPrefix) - 1)] = std::move(tensor);
    } else {
      variables.emplace_back(std::move(name), std::move(tensor));
    }
  }
  const std::vector<int64_t> version = Int64Values(entries, "version");
  if (version.size() != 1) {
    return FailedPrecondition(path +
                              ": no @model/version: not a model file, or one written by "
                              "pstrain 0.5 or older (train again to use it with predict)");
  }
  if (version[0] != kModelFileVersion) {
    return FailedPrecondition(path + ": model file version " + std::to_string(version[0]) +
                              "; this pstrain reads version " + std::to_string(kModelFileVersion));
  }
  const std::vector<int64_t> shape = Int64Values(entries, "input_shape");
  const std::vector<int64_t> classes = Int64Values(entries, "classes");
  if (shape.empty() || classes.size() != 1) {
    return FailedPrecondition(path + ": @model/input_shape or @model/classes is missing");
  }
  TrainedModel trained;
  trained.input = InputShape(shape);
  trained.num_classes = static_cast<int>(classes[0]);
  const std::vector<float> mean = FloatValues(entries, "standardize_mean");
  const std::vector<float> scale = FloatValues(entries, "standardize_scale");
  if (!mean.empty() || !scale.empty()) {
    if (static_cast<int64_t>(mean.size()) != trained.input.size() || scale.size() != mean.size()) {
      return FailedPrecondition(path + ": its standardization does not fit its input shape");
    }
    trained.standardization = Standardization{mean, scale};
  }
  if (const std::vector<int64_t> name = Int64Values(entries, "click_model"); !name.empty()) {
    return ReadClickModel(path, std::string(name.begin(), name.end()), entries,
                          std::move(variables), std::move(trained));
  }
  std::vector<std::string> candidates = ModelNames();
  if (const std::vector<int64_t> spec = Int64Values(entries, "spec"); !spec.empty()) {
    candidates = {std::string(spec.begin(), spec.end())};
  }
  PST_ASSIGN_OR_RETURN(trained.model, IdentifyModel(path, variables, candidates, trained.input,
                                                    trained.num_classes));
  for (auto& [name, tensor] : variables) trained.params.push_back(std::move(tensor));
  return trained;
}

}  // namespace pst
