#include "predict/predictor.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "export/onnx_export.h"
#include "job/model_file.h"
#include "model/model_zoo.h"

namespace pst {
namespace {

// As the chief's Evaluator: the same batches give the same float results.
constexpr int64_t kBatchSize = 1000;

Status CheckFits(const TrainedModel& trained, const Dataset& data, const std::string& path) {
  const InputShape shape =
      data.example_shape.empty() ? InputShape(data.feature_dim) : InputShape(data.example_shape);
  if (shape.size() != trained.input.size() ||
      (shape.is_image() && trained.input.is_image() && !(shape == trained.input))) {
    return InvalidArgument("the data's examples (" + shape.ToString() + ") do not fit " + path +
                           ", trained on " + trained.input.ToString());
  }
  return Status::OK();
}

std::string Fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

std::string PredictionReport::Format() const {
  std::string out = "Model: " + model + "\n";
  out += "Examples: " + std::to_string(examples) + "\n";
  out += "Test-Accuracy: " + Fixed(accuracy(), 4) + "\n";
  out += "class  precision  recall  examples\n";
  const size_t classes = confusion.size();
  for (size_t c = 0; c < classes; ++c) {
    int64_t predicted = 0, actual = 0;
    for (size_t k = 0; k < classes; ++k) {
      predicted += confusion[k][c];
      actual += confusion[c][k];
    }
    const int64_t hits = confusion[c][c];
    out += std::string(5 - std::min<size_t>(5, std::to_string(c).size()), ' ') + std::to_string(c) +
           "  " + (predicted ? Fixed(double(hits) / predicted, 4) : std::string("     -")) +
           "     " + (actual ? Fixed(double(hits) / actual, 4) : std::string("     -")) + "  " +
           std::to_string(actual) + "\n";
  }
  out += "Confusion matrix (rows: label, columns: predicted class):\n";
  for (const auto& row : confusion) {
    for (size_t k = 0; k < row.size(); ++k) out += (k ? " " : "") + std::to_string(row[k]);
    out += "\n";
  }
  return out;
}

StatusOr<std::vector<float>> PredictProbabilities(const TrainedModel& trained,
                                                  const std::string& model_file,
                                                  const Dataset& data, const std::string& device) {
  PST_RETURN_IF_ERROR(CheckFits(trained, data, model_file));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                       MakeModel(trained.model, trained.input, trained.num_classes, device));
  const int64_t d = data.feature_dim, classes = trained.num_classes;
  std::vector<float> all(data.size * classes), probabilities;
  Batch batch;
  for (int64_t begin = 0; begin < data.size; begin += kBatchSize) {
    const int64_t n = std::min(kBatchSize, data.size - begin);
    batch.size = n;
    batch.feature_dim = d;
    batch.features.assign(data.features.begin() + begin * d,
                          data.features.begin() + (begin + n) * d);
    if (trained.standardization) StandardizeRows(*trained.standardization, &batch.features);
    PST_RETURN_IF_ERROR(model->Predict(trained.params, batch, &probabilities));
    std::copy(probabilities.begin(), probabilities.end(), all.begin() + begin * classes);
  }
  return all;
}

StatusOr<PredictionReport> RunPredict(const PredictOptions& options) {
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(options.model_file));
  PST_ASSIGN_OR_RETURN(Dataset data, LoadTestSet(options.data, trained.num_classes));
  PST_ASSIGN_OR_RETURN(std::vector<float> probabilities,
                       PredictProbabilities(trained, options.model_file, data));

  std::ofstream csv;
  if (!options.output.empty()) {
    csv.open(options.output);
    if (!csv) return InvalidArgument("cannot write --output=" + options.output);
    csv.precision(std::numeric_limits<float>::max_digits10);  // the floats exactly
    csv << "label,predicted";
    for (int c = 0; c < trained.num_classes; ++c) csv << ",p" << c;
    csv << "\n";
  }
  PredictionReport report;
  report.model = ModelLabel(trained.model) + " on " + trained.input.ToString() + ", " +
                 std::to_string(trained.num_classes) + " classes";
  report.confusion.assign(trained.num_classes, std::vector<int64_t>(trained.num_classes, 0));
  const int64_t classes = trained.num_classes;
  for (int64_t i = 0; i < data.size; ++i) {
    const float* p = probabilities.data() + i * classes;
    const int predicted = static_cast<int>(std::max_element(p, p + classes) - p);
    const int label = data.labels[i];
    ++report.confusion[label][predicted];
    report.correct += predicted == label;
    if (csv.is_open()) {
      csv << label << "," << predicted;
      for (int64_t c = 0; c < classes; ++c) csv << "," << p[c];
      csv << "\n";
    }
  }
  report.examples = data.size;
  if (csv.is_open() && !csv.flush())
    return DataLoss("writing --output=" + options.output + " failed");
  return report;
}

Status ExportOnnx(const PredictOptions& options) {
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(options.model_file));
  return WriteOnnxModel(options.export_onnx, trained);
}

}  // namespace pst
