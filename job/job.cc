#include "job/job.h"

#include <cstdio>

#include "model/model_zoo.h"

namespace pst {

std::string Job::Describe() const {
  return "dataset=" + dataset + " input=" + input.ToString() +
         " classes=" + std::to_string(num_classes) + " model=" + ModelLabel(model);
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
  job.input =
      train.example_shape.empty() ? InputShape(train.feature_dim) : InputShape(train.example_shape);
  job.num_classes = train.num_classes;
  PST_RETURN_IF_ERROR(CheckModelTakes(options.model, job.input, job.num_classes));
  return job;
}

}  // namespace pst
