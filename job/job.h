// Job: what a training run trains, built once from the flags and handed to
// the chief and to every worker: the data splits, the input shape and class
// count they imply, and the model's name. Every task of a run must describe
// the same job (Describe(), checked when a worker joins).
#ifndef PST_JOB_JOB_H_
#define PST_JOB_JOB_H_

#include <string>

#include "common/input_shape.h"
#include "common/status.h"
#include "data/data_source.h"

namespace pst {

struct JobOptions {
  DataOptions data;
  std::string model = "mlp";  // a zoo name, or SpecModelName(spec text)
};

// A model's name for logs: the zoo name, or "spec-<hash of its text>".
std::string ModelLabel(const std::string& model);

struct Job {
  std::string dataset;  // the format
  std::string model;
  DataSplits data;
  InputShape input = 0;
  int num_classes = 0;

  // "dataset=csv input=20 features classes=3 model=mlp_relu"
  std::string Describe() const;
};

// Loads the data (the test set with `with_test`: the chief evaluates) and
// checks that the model takes it; errors name both sides.
StatusOr<Job> LoadJob(const JobOptions& options, bool with_test);

}  // namespace pst

#endif  // PST_JOB_JOB_H_
