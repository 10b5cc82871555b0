// predict: a trained model (model.bin, job/model_file.h) on a data set: its
// accuracy, each class's precision and recall, the confusion matrix, and
// optionally each example's predicted class and class probabilities (CSV).
#ifndef PST_PREDICT_PREDICTOR_H_
#define PST_PREDICT_PREDICTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/data_source.h"
#include "job/model_file.h"
#include "model/ctr/binary_metrics.h"

namespace pst {

struct PredictOptions {
  std::string model_file;
  // Instead of model_file: the model of an export folder (job/export_files.h)
  // at export_step (-1: the newest).
  std::string export_dir;
  int64_t export_step = -1;
  DataOptions data;  // the test split of it is predicted
  // CSV "label,predicted,p0,p1,..." per example, probabilities written
  // to float precision (9 significant digits); "" = none.
  std::string output;
  std::string export_onnx;  // the model as ONNX (export/onnx_export.h); "" = none
  bool predict = true;      // false: only export
};

struct PredictionReport {
  std::string model;  // the model file's description ("mlp_relu on 28x28x1 image, 10 classes")
  std::optional<int64_t> export_step;  // with --export_dir: the export's step
  int64_t examples = 0;
  int64_t correct = 0;
  // confusion[label][predicted]: examples of that label given that class.
  std::vector<std::vector<int64_t>> confusion;
  // Click models: the exact AUC, log-loss and CTR of the set.
  std::optional<BinaryMetrics> binary;

  double accuracy() const { return examples ? double(correct) / examples : 0; }
  // "Test-Accuracy: 0.9781" (as the chief prints it; a click model's
  // Test-AUC, Test-LogLoss and Test-CTR after it), then per class
  // precision and recall, then the confusion matrix.
  std::string Format() const;
};

StatusOr<PredictionReport> RunPredict(const PredictOptions& options);

// `data` fitted to what `trained` was trained on, when the flags cannot say
// it: libffm's field count, criteo's integer fields (without --features).
DataOptions DataOptionsFor(const TrainedModel& trained, DataOptions data);

// `trained`'s class probabilities for every example of `data` (examples x
// classes, row-major), on `device`; the model's standardization is applied
// to a copy of the features. InvalidArgument when the examples do not fit
// the model, naming `model_file`.
StatusOr<std::vector<float>> PredictProbabilities(const TrainedModel& trained,
                                                  const std::string& model_file,
                                                  const Dataset& data,
                                                  const std::string& device = "cpu");

// options.model_file's model, or options.export_dir's at options.export_step
// (*export_step set to the export's step); *name: what names it in errors.
StatusOr<TrainedModel> ReadPredictedModel(const PredictOptions& options, std::string* name,
                                          std::optional<int64_t>* export_step);

// Writes options.model_file's model as ONNX to options.export_onnx.
Status ExportOnnx(const PredictOptions& options);

}  // namespace pst

#endif  // PST_PREDICT_PREDICTOR_H_
