#include "job/job.h"

#include <cstdio>

#include "model/ctr_model.h"
#include "model/ctr_spec.h"
#include "model/model_zoo.h"

namespace pst {

std::string Job::Describe() const {
  std::string tables;
  if (click_model) {
    tables = " fields=" + std::to_string(num_fields) + " tables=" +
             (table_rows > 0 ? "fixed:" + std::to_string(table_rows) : std::string("dynamic"));
  }
  return "dataset=" + dataset + " input=" + input.ToString() +
         " classes=" + std::to_string(num_classes) + tables + " model=" + ModelLabel(model);
}

std::string ModelLabel(const std::string& model) {
  if (!IsSpecModel(model)) return model;
  // FNV-1a of the spec's text: two tasks with different specs differ here.
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : model) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string("spec-") + hex;
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
    if (job.num_classes != 2) {
      return InvalidArgument("a click model needs labels 0 and 1; the data has " +
                             std::to_string(job.num_classes) + " classes");
    }
    PST_RETURN_IF_ERROR(
        ClickModelConfig(options.model, train.feature_dim, train.num_fields, job.table_rows)
            .status());
    return job;
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
  PST_ASSIGN_OR_RETURN(CtrModelConfig config, ClickModelConfig(job.model, job.input.size(),
                                                               job.num_fields, job.table_rows));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<CtrModel> model, CtrModel::Create(config, kernels));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace pst
