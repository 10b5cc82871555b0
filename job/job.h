// Job: what a training run trains, built once from the flags and handed to
// the chief and to every worker: the data splits, the input shape and class
// count they imply, and the model's name. Every task of a run must describe
// the same job (Describe(), checked when a worker joins).
#ifndef PST_JOB_JOB_H_
#define PST_JOB_JOB_H_

#include <memory>
#include <string>

#include "common/input_shape.h"
#include "common/status.h"
#include "data/data_source.h"
#include "kernels/kernels.h"
#include "model/model.h"

namespace pst {

struct JobOptions {
  DataOptions data;
  std::string model = "mlp";  // a zoo name, or SpecModelName(spec text)
  // Click models (model/ctr_spec.h): fixed embedding tables of this many
  // rows (hash buckets), or, with embedding_capacity > 0, dynamic tables
  // (any 64-bit key; the capacity is per table per ps).
  int64_t embedding_rows = 1000000;
  int64_t embedding_capacity = 0;
};

// A model's name for logs: the zoo name, or "spec-<hash of its text>".
std::string ModelLabel(const std::string& model);

struct Job {
  std::string dataset;  // the format
  std::string model;
  DataSplits data;
  InputShape input = 0;
  int num_classes = 0;
  // Click models: the data's sparse fields and the tables' rows (0: dynamic).
  bool click_model = false;
  int num_fields = 0;
  int64_t table_rows = 0;

  // "dataset=csv input=20 features classes=3 model=mlp_relu"
  std::string Describe() const;
};

// Loads the data (the test set with `with_test`: the chief evaluates) and
// checks that the model takes it; errors name both sides.
StatusOr<Job> LoadJob(const JobOptions& options, bool with_test);

// The job's model on the CPU: a click model (model/ctr_model.h) or a zoo or
// spec model (model/model_zoo.h).
StatusOr<std::unique_ptr<Model>> MakeJobModel(const Job& job, const KernelsOptions& kernels = {});

}  // namespace pst

#endif  // PST_JOB_JOB_H_
