#include "predict/predictor.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "data/example_range.h"
#include "export/onnx_export.h"
#include "job/model_file.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

// As the chief's Evaluator: the same batches give the same float results.
constexpr int64_t kBatchSize = 1000;

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

Status CheckFits(const TrainedModel& trained, const Dataset& data, const std::string& path) {
  const InputShape& shape = data.example_shape;
  if (shape.size() != trained.input.size() ||
      (shape.is_image() && trained.input.is_image() && !(shape == trained.input))) {
    return InvalidArgument("the data's examples (" + shape.ToString() + ") do not fit " + path +
                           ", trained on " + trained.input.ToString());
  }
  if (data.num_fields != trained.num_fields) {
    return InvalidArgument("the data has " + std::to_string(data.num_fields) + " sparse fields; " +
                           path + " was trained on " + std::to_string(trained.num_fields));
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

// A click model's variables, then the rows of the batch's ids gathered from
// each whole table (which follow the variables in `trained`).
std::vector<Tensor> WithBatchRows(const Model& model, const std::vector<Tensor>& trained,
                                  const Batch& batch) {
  const size_t variables = model.variables().size();
  std::vector<Tensor> params(trained.begin(), trained.begin() + variables);
  const TableRowIds ids = model.RowIds(batch);
  for (size_t t = 0; t < model.tables().size(); ++t) {
    const int64_t dim = model.tables()[t].dim;
    const Tensor& table = trained[variables + t];
    const std::vector<int64_t>& at = ids[t];
    Tensor rows = Tensor::Uninitialized(DType::kFloat32, {static_cast<int64_t>(at.size()), dim});
    for (size_t i = 0; i < at.size(); ++i) {
      std::copy(table.f32() + at[i] * dim, table.f32() + (at[i] + 1) * dim, rows.f32() + i * dim);
    }
    params.push_back(std::move(rows));
  }
  return params;
}

StatusOr<std::vector<float>> PredictProbabilities(const TrainedModel& trained,
                                                  const std::string& model_file,
                                                  const Dataset& data, const std::string& device) {
  PST_RETURN_IF_ERROR(CheckFits(trained, data, model_file));
  StatusOr<std::unique_ptr<Model>> made =
      trained.click_model ? MakeTrainedModel(trained)
                          : MakeModel(trained.model, trained.input, trained.num_classes, device);
  PST_RETURN_IF_ERROR(made.status());
  const std::unique_ptr<Model> model = std::move(made).value();
  const int64_t classes = trained.num_classes;
  std::vector<float> all(data.size * classes), probabilities;
  Batch batch;
  std::vector<Tensor> params = trained.params;
  for (int64_t begin = 0; begin < data.size; begin += kBatchSize) {
    const int64_t n = std::min(kBatchSize, data.size - begin);
    CopyExamples(data, begin, n, &batch);
    if (trained.standardization) StandardizeRows(*trained.standardization, &batch.features);
    if (trained.click_model) params = WithBatchRows(*model, trained.params, batch);
    PST_RETURN_IF_ERROR(model->Predict(params, batch, &probabilities));
    std::copy(probabilities.begin(), probabilities.end(), all.begin() + begin * classes);
  }
  return all;
}

StatusOr<PredictionReport> RunPredict(const PredictOptions& options) {
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(options.model_file));
  PST_RETURN_IF_ERROR(CheckFeatures(trained, options.model_file, options.data));
  DataOptions data_options = options.data;
  // libffm: a test file that never reaches the model's last field still fits
  // (with --features the columns make the fields).
  if (!data_options.features) data_options.min_fields = trained.num_fields;
  PST_ASSIGN_OR_RETURN(Dataset data, LoadTestSet(data_options, trained.num_classes));
  PST_ASSIGN_OR_RETURN(std::vector<float> probabilities,
                       PredictProbabilities(trained, options.model_file, data));

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
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(options.model_file));
  return WriteOnnxModel(options.export_onnx, trained);
}

}  // namespace pst
