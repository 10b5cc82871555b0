#include "job/job.h"

#include "model/model_zoo.h"

namespace pst {

std::string Job::Describe() const {
  return "dataset=" + dataset + " input=" + input.ToString() +
         " classes=" + std::to_string(num_classes) + " model=" + model;
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
