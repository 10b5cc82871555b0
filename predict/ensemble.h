// An ensemble of trained models (`predict --ensemble=m1.bin,m2.bin,...`):
// each member predicts the same examples (on a device of its own when given
// one each) and the ensemble's class probabilities are the mean of the
// members'. Reports each member's and the ensemble's accuracy on the
// validation split (with --validation_examples: the held-out training
// examples, as the runs held them out) and on the test split.
#ifndef PST_PREDICT_ENSEMBLE_H_
#define PST_PREDICT_ENSEMBLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/data_source.h"

namespace pst {

struct EnsembleOptions {
  std::vector<std::string> members;  // model.bin files
  // One device per member ("cpu", "gpu:0", ...), or empty: every member on cpu.
  std::vector<std::string> devices;
  DataOptions data;
};

struct SplitAccuracy {
  std::string split;  // "validation" or "test"
  int64_t examples = 0;
  std::vector<double> members;  // in EnsembleOptions::members' order
  double ensemble = 0;
};

struct EnsembleReport {
  std::vector<std::string> members;  // each file's model description
  std::vector<SplitAccuracy> splits;
  // A table: one row per member and one for the ensemble, a column per split.
  std::string Format() const;
};

// The mean of equally shaped probability tables (examples x classes).
std::vector<float> MeanProbabilities(const std::vector<std::vector<float>>& tables);

// The fraction of examples whose most probable class (the first of ties)
// is their label.
double Accuracy(const std::vector<float>& probabilities, const std::vector<int32_t>& labels,
                int num_classes);

// InvalidArgument for fewer than two members, a device list of another
// length, or members that disagree on the input size or the classes
// (naming both files); the readers' and the models' errors.
StatusOr<EnsembleReport> RunEnsemble(const EnsembleOptions& options);

}  // namespace pst

#endif  // PST_PREDICT_ENSEMBLE_H_
