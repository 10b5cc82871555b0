#include "job/job.h"

#include <algorithm>
#include <cstdio>

#include "model/ctr/ctr_model.h"
#include "model/ctr/ctr_spec.h"
#include "model/zoo/model_zoo.h"

namespace pst {

std::string Job::Describe() const {
  std::string tables;
  if (click_model) {
    tables = " fields=" + std::to_string(num_fields) + " tables=" +
             (table_rows > 0 ? "fixed:" + std::to_string(table_rows) : std::string("dynamic"));
  }
  if (features) tables += " features=" + features_hash;
  return "dataset=" + dataset + " input=" + input.ToString() +
         " classes=" + std::to_string(num_classes) + tables + " model=" + ModelLabel(model);
}

namespace {

// FNV-1a of a text, 16 hex digits: two tasks with different texts differ here.
std::string TextHash(const std::string& text) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace

std::string ModelLabel(const std::string& model) {
  if (!IsSpecModel(model)) return model;
  return "spec-" + TextHash(model);
}

Status ApplyFeatureSummary(const FeatureSummary& summary, CtrModelConfig* config) {
  if (summary.embedding_dim > 0) config->embedding_dim = summary.embedding_dim;
  config->field_dims.clear();
  config->field_ranges.clear();
  std::vector<int64_t> dims;
  for (const int64_t d : summary.field_dims) dims.push_back(d > 0 ? d : config->embedding_dim);
  const auto other =
      std::find_if(dims.begin(), dims.end(), [&](int64_t d) { return d != dims[0]; });
  if (!dims.empty() && other == dims.end()) {
    config->embedding_dim = dims[0];  // the model's dim where no column states one
  } else if (!dims.empty()) {
    if (config->fm || config->dot) {
      const size_t f = other - dims.begin();
      return InvalidArgument(
          "the feature file's column " + summary.field_names[f] + " has dim " +
          std::to_string(dims[f]) + " and column " + summary.field_names[0] + " " +
          std::to_string(dims[0]) + ": " +
          (config->fm ? "fm's pairwise dot products need" : "dlrm's dot interaction needs") +
          " one embedding dim for every field");
    }
    config->field_dims = dims;
    config->field_ranges = summary.field_ranges;
  }
  config->field_combiners.clear();
  const bool stated = std::any_of(summary.field_combiners.begin(), summary.field_combiners.end(),
                                  [](FieldCombiner c) { return c != FieldCombiner::kDefault; });
  if (!stated) return Status::OK();
  for (const FieldCombiner c : summary.field_combiners) {
    switch (c) {
      case FieldCombiner::kDefault: config->field_combiners.push_back(config->combiner); break;
      case FieldCombiner::kSum: config->field_combiners.push_back(Combiner::kSum); break;
      case FieldCombiner::kMean: config->field_combiners.push_back(Combiner::kMean); break;
      case FieldCombiner::kSqrtN: config->field_combiners.push_back(Combiner::kSqrtN); break;
    }
  }
  return Status::OK();
}

Status CheckFeatureTables(const FeatureSummary& summary, const JobOptions& options) {
  if (summary.table_rows == 0 && options.embedding_capacity == 0) {
    return InvalidArgument(
        "the feature file's tables are dynamic (no buckets=N): give --embedding_capacity, the "
        "rows a ps may hold");
  }
  if (summary.table_rows > 0 && options.embedding_capacity > 0) {
    return InvalidArgument("the feature file's tables are hashed (" +
                           std::to_string(summary.table_rows) +
                           " rows in all): --embedding_capacity is for dynamic tables");
  }
  return Status::OK();
}

StatusOr<CtrModelConfig> JobClickModelConfig(const Job& job) {
  PST_ASSIGN_OR_RETURN(CtrModelConfig config, ClickModelConfig(job.model, job.input.size(),
                                                               job.num_fields, job.table_rows));
  if (job.features) PST_RETURN_IF_ERROR(ApplyFeatureSummary(*job.features, &config));
  return config;
}

StatusOr<Job> LoadJob(const JobOptions& options, bool with_test) {
  Job job;
  job.dataset = options.data.format;
  job.model = options.model;
  PST_ASSIGN_OR_RETURN(job.data, LoadData(options.data, with_test));
  const Dataset& train = job.data.train;
  job.input = train.example_shape;
  job.num_classes = train.num_classes;
  job.num_fields = train.num_fields;
  if (IsClickModel(options.model)) {
    if (options.embedding_rows < 0 || options.embedding_capacity < 0) {
      return InvalidArgument("a click model's embedding rows and capacity must be >= 0");
    }
    if (options.embedding_rows == 0 && options.embedding_capacity == 0) {
      return InvalidArgument(
          "a click model needs table rows (fixed tables) or a table capacity (dynamic ones)");
    }
    job.click_model = true;
    job.table_rows = options.embedding_capacity > 0 ? 0 : options.embedding_rows;
    if (options.data.features) {
      PST_RETURN_IF_ERROR(CheckFeatureTables(options.data.features->summary, options));
      job.features = options.data.features->summary;
      job.features_text = options.data.features->text;
      job.features_hash = TextHash(job.features_text);
      job.table_rows = job.features->table_rows;
    }
    if (job.num_classes != 2) {
      return InvalidArgument("a click model needs labels 0 and 1; the data has " +
                             std::to_string(job.num_classes) + " classes");
    }
    PST_RETURN_IF_ERROR(JobClickModelConfig(job).status());
    return job;
  }
  if (options.data.features) {
    return InvalidArgument(
        "--features describes click data: it needs a click model (wide_deep, or a model spec "
        "whose first line is 'embedding DIM')");
  }
  if (train.num_fields > 0) {
    return InvalidArgument(
        job.dataset +
        " data has sparse features: it needs a click model (wide_deep, fm, deepfm, dcn_v2, "
        "dlrm, or a "
        "model spec whose first line is 'embedding DIM')");
  }
  PST_RETURN_IF_ERROR(CheckModelTakes(options.model, job.input, job.num_classes));
  return job;
}

StatusOr<std::unique_ptr<Model>> MakeJobModel(const Job& job, const KernelsOptions& kernels) {
  if (!job.click_model) return MakeModel(job.model, job.input, job.num_classes, "cpu", kernels);
  PST_ASSIGN_OR_RETURN(CtrModelConfig config, JobClickModelConfig(job));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<CtrModel> model, CtrModel::Create(config, kernels));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace pst
