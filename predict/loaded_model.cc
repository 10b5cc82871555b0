#include "predict/loaded_model.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "data/data_source.h"
#include "data/example_range.h"
#include "data/feature_columns.h"
#include "data/standardize.h"
#include "job/job.h"
#include "job/trained_rows.h"
#include "model/zoo/model_zoo.h"
#include "predict/predictor.h"

namespace pst {
namespace {

// As the chief's Evaluator: the same batches give the same float results.
constexpr int64_t kBatchSize = 1000;

// Fills *batch with examples [begin, begin + n).
using BatchFiller = std::function<void(int64_t begin, int64_t n, Batch* batch)>;

Status CheckFits(const TrainedModel& trained, const InputShape& shape, int num_fields,
                 const std::string& path) {
  if (shape.size() != trained.input.size() ||
      (shape.is_image() && trained.input.is_image() && !(shape == trained.input))) {
    return InvalidArgument("the data's examples (" + shape.ToString() + ") do not fit " + path +
                           ", trained on " + trained.input.ToString());
  }
  if (num_fields != trained.num_fields) {
    return InvalidArgument("the data has " + std::to_string(num_fields) + " sparse fields; " +
                           path + " was trained on " + std::to_string(trained.num_fields));
  }
  return Status::OK();
}

// A click model's variables, then the rows of the batch's ids gathered from
// its whole tables.
StatusOr<std::vector<Tensor>> WithBatchRows(const Model& model, const TrainedModel& trained,
                                            const Batch& batch) {
  const size_t variables = model.variables().size();
  std::vector<Tensor> params(trained.params.begin(), trained.params.begin() + variables);
  std::vector<Tensor> rows;
  PST_RETURN_IF_ERROR(GatherTrainedRows(trained, model, model.RowIds(batch), &rows));
  params.insert(params.end(), std::make_move_iterator(rows.begin()),
                std::make_move_iterator(rows.end()));
  return params;
}

// The one batch loop: `n` examples from `fill`, probabilities into `out`.
Status PredictBatches(const TrainedModel& trained, Model& model, int64_t n, const BatchFiller& fill,
                      float* out) {
  const int64_t classes = trained.num_classes;
  std::vector<float> probabilities;
  Batch batch;
  std::vector<Tensor> params = trained.params;
  for (int64_t begin = 0; begin < n; begin += kBatchSize) {
    const int64_t size = std::min(kBatchSize, n - begin);
    fill(begin, size, &batch);
    if (trained.standardization) StandardizeRows(*trained.standardization, &batch.features);
    if (trained.click_model) {
      PST_ASSIGN_OR_RETURN(params, WithBatchRows(model, trained, batch));
    }
    PST_RETURN_IF_ERROR(model.Predict(params, batch, &probabilities));
    std::copy(probabilities.begin(), probabilities.end(), out + begin * classes);
  }
  return Status::OK();
}

// The data options a click model reads its test examples in `format` with:
// predict's for its --test_file, the feature file the model was trained
// with, if any.
StatusOr<DataOptions> ClickDataOptions(const TrainedModel& trained, const std::string& model_file,
                                       const std::string& format) {
  if (!trained.click_model) {
    return InvalidArgument(model_file + " is no click model: it takes dense features");
  }
  if (format != "criteo" && format != "libsvm" && format != "libffm") {
    return InvalidArgument("format '" + format + "' is not criteo, libsvm or libffm");
  }
  DataOptions options;
  options.format = format;
  if (!trained.features_text.empty()) {
    PST_ASSIGN_OR_RETURN(options.features,
                         ParseFeatureColumns(trained.features_text, model_file, format));
  }
  return DataOptionsFor(trained, options);
}

}  // namespace

std::string ModelDescription(const TrainedModel& trained) {
  return ModelLabel(trained.model) + " on " + trained.input.ToString() + ", " +
         std::to_string(trained.num_classes) + " classes";
}

StatusOr<std::unique_ptr<LoadedModel>> LoadedModel::Open(const std::string& model_file,
                                                         const std::string& device) {
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(model_file));
  return Make(std::move(trained), model_file, device);
}

StatusOr<std::unique_ptr<LoadedModel>> LoadedModel::Make(TrainedModel trained,
                                                         std::string model_file,
                                                         const std::string& device) {
  StatusOr<std::unique_ptr<Model>> made =
      trained.click_model ? MakeTrainedModel(trained)
                          : MakeModel(trained.model, trained.input, trained.num_classes, device);
  PST_RETURN_IF_ERROR(made.status());
  return std::unique_ptr<LoadedModel>(
      new LoadedModel(std::move(trained), std::move(model_file), std::move(made).value()));
}

Status LoadedModel::PredictDataset(const Dataset& data, float* out) {
  PST_RETURN_IF_ERROR(CheckFits(trained_, data.example_shape, data.num_fields, model_file_));
  return PredictBatches(
      trained_, *model_, data.size,
      [&data](int64_t begin, int64_t n, Batch* batch) { CopyExamples(data, begin, n, batch); },
      out);
}

Status LoadedModel::PredictDense(const float* features, int64_t n, const InputShape& shape,
                                 float* out) {
  PST_RETURN_IF_ERROR(CheckFits(trained_, shape, /*num_fields=*/0, model_file_));
  const int64_t d = shape.size();
  // As CopyExamples does for a dense Dataset.
  return PredictBatches(
      trained_, *model_, n,
      [features, d](int64_t begin, int64_t size, Batch* batch) {
        batch->size = size;
        batch->feature_dim = d;
        batch->features.assign(features + begin * d, features + (begin + size) * d);
        batch->labels.assign(size, 0);
        batch->num_fields = 0;
      },
      out);
}

StatusOr<Dataset> LoadedModel::ReadTestFile(const std::string& path,
                                            const std::string& format) const {
  PST_ASSIGN_OR_RETURN(const DataOptions* test_options, TestDataOptions(format));
  DataOptions options = *test_options;
  options.test_file = path;
  return LoadTestSet(options, trained_.num_classes);
}

StatusOr<Dataset> LoadedModel::ParseTestLines(const std::vector<std::string>& lines,
                                              const std::string& format) const {
  PST_ASSIGN_OR_RETURN(const DataOptions* options, TestDataOptions(format));
  return pst::ParseTestLines(*options, lines, trained_.num_classes);
}

StatusOr<const DataOptions*> LoadedModel::TestDataOptions(const std::string& format) const {
  auto kept = test_data_options_.find(format);
  if (kept == test_data_options_.end()) {
    PST_ASSIGN_OR_RETURN(DataOptions options, ClickDataOptions(trained_, model_file_, format));
    kept = test_data_options_.emplace(format, std::move(options)).first;
  }
  return &kept->second;
}

}  // namespace pst
