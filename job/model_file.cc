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

// A click model's entries: its variables and whole tables, checked against
// the model its name, fields and table rows make.
StatusOr<TrainedModel> ReadClickModel(const std::string& path, const std::string& name,
                                      const std::map<std::string, Tensor>& entries,
                                      NamedTensors tensors, TrainedModel trained) {
  const std::vector<int64_t> fields = Int64Values(entries, "click_fields");
  const std::vector<int64_t> rows = Int64Values(entries, "click_table_rows");
  if (fields.size() != 1 || rows.size() != 1 || rows[0] < 1) {
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
  std::vector<std::pair<std::string, Shape>> expected;
  for (const VariableSpec& v : model->variables()) expected.emplace_back(v.name, v.shape);
  for (const EmbeddingTableSpec& t : model->tables()) {
    expected.emplace_back(t.name, Shape{t.rows, t.dim});
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

}  // namespace

TrainedModel TrainedModelOf(const Job& job, std::vector<Tensor> params) {
  TrainedModel trained;
  trained.model = job.model;
  trained.input = job.input;
  trained.num_classes = job.num_classes;
  trained.standardization = job.data.standardization;
  trained.params = std::move(params);
  trained.click_model = job.click_model;
  trained.num_fields = job.num_fields;
  trained.table_rows = job.table_rows;
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
                      const std::vector<Tensor>& params) {
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
