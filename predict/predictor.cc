#include "predict/predictor.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "data/criteo_reader.h"
#include "export/onnx_export.h"
#include "job/export_files.h"
#include "job/model_file.h"
#include "predict/loaded_model.h"

namespace pst {
namespace {

// The data must go through the feature file the model was trained with.
Status CheckFeatures(const TrainedModel& trained, const std::string& path,
                     const DataOptions& data) {
  const bool trained_with = !trained.features_text.empty();
  if (trained_with && !data.features) {
    return InvalidArgument(path + " was trained with --features: give the same feature file");
  }
  if (!trained_with && data.features) {
    return InvalidArgument(path + " was trained without --features: leave it out");
  }
  if (trained_with && data.features->text != trained.features_text) {
    return InvalidArgument("--features=" + data.features->source + " is not the feature file " +
                           path + " was trained with");
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
  if (export_step) out += "Export-Step: " + std::to_string(*export_step) + "\n";
  out += "Examples: " + std::to_string(examples) + "\n";
  out += "Test-Accuracy: " + Fixed(accuracy(), 4) + "\n";
  if (binary) {
    out += "Test-AUC: " + Fixed(binary->auc, 4) + "\n";
    out += "Test-LogLoss: " + Fixed(binary->log_loss, 4) + "\n";
    out += "Test-CTR: " + Fixed(binary->ctr, 4) + "\n";
  }
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

DataOptions DataOptionsFor(const TrainedModel& trained, DataOptions data) {
  // With --features the columns make the fields.
  if (data.features) return data;
  // libffm: a test file that never reaches the model's last field still fits.
  data.min_fields = trained.num_fields;
  // criteo: the integers as fields when the model was trained with them.
  data.criteo_integer_fields = trained.num_fields == kCriteoFieldsWithIntegers;
  return data;
}

StatusOr<std::vector<float>> PredictProbabilities(const TrainedModel& trained,
                                                  const std::string& model_file,
                                                  const Dataset& data, const std::string& device) {
  PST_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> loaded,
                       LoadedModel::Make(trained, model_file, device));
  std::vector<float> all(data.size * trained.num_classes);
  PST_RETURN_IF_ERROR(loaded->PredictDataset(data, all.data()));
  return all;
}

StatusOr<TrainedModel> ReadPredictedModel(const PredictOptions& options, std::string* name,
                                          std::optional<int64_t>* export_step) {
  if (options.export_dir.empty()) {
    *name = options.model_file;
    return ReadModelFile(options.model_file);
  }
  PST_ASSIGN_OR_RETURN(
      ExportedModel exported,
      LoadExport(options.export_dir, options.export_step < 0 ? std::numeric_limits<int64_t>::max()
                                                             : options.export_step));
  if (options.export_step >= 0 && exported.step != options.export_step) {
    return NotFound(options.export_dir + " has no export at step " +
                    std::to_string(options.export_step) + " (the one before it is at step " +
                    std::to_string(exported.step) + ")");
  }
  *name = options.export_dir + " at step " + std::to_string(exported.step);
  *export_step = exported.step;
  return std::move(exported.trained);
}

StatusOr<PredictionReport> RunPredict(const PredictOptions& options) {
  std::string name;
  std::optional<int64_t> export_step;
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadPredictedModel(options, &name, &export_step));
  PST_RETURN_IF_ERROR(CheckFeatures(trained, name, options.data));
  const DataOptions data_options = DataOptionsFor(trained, options.data);
  PST_ASSIGN_OR_RETURN(Dataset data, LoadTestSet(data_options, trained.num_classes));
  PST_ASSIGN_OR_RETURN(std::vector<float> probabilities, PredictProbabilities(trained, name, data));

  std::ofstream csv;
  if (!options.output.empty()) {
    csv.open(options.output);
    if (!csv) return InvalidArgument("cannot write the predictions to " + options.output);
    csv.precision(std::numeric_limits<float>::max_digits10);  // the floats exactly
    csv << "label,predicted";
    for (int c = 0; c < trained.num_classes; ++c) csv << ",p" << c;
    csv << "\n";
  }
  PredictionReport report;
  report.model = ModelDescription(trained);
  report.export_step = export_step;
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
  if (trained.click_model) {
    std::vector<float> clicks(data.size);
    for (int64_t i = 0; i < data.size; ++i) clicks[i] = probabilities[2 * i + 1];
    report.binary = ComputeBinaryMetrics(clicks, data.labels);
  }
  if (csv.is_open() && !csv.flush())
    return DataLoss("writing the predictions to " + options.output + " failed");
  return report;
}

Status ExportOnnx(const PredictOptions& options) {
  std::string name;
  std::optional<int64_t> export_step;
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadPredictedModel(options, &name, &export_step));
  return WriteOnnxModel(options.export_onnx, trained);
}

}  // namespace pst
