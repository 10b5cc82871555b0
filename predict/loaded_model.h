// LoadedModel: a trained model (model.bin) built once and kept, for
// predictions on examples in memory (the Python package's pstrain.load) as
// well as on a data set (PredictProbabilities, the predict executable).
// Both go through one batch loop: batches of 1000 from the first example,
// the model's standardization on each batch's copy of the features, a click
// model's table rows gathered per batch. So the same examples give the same
// probabilities to the bit, whichever way they came in.
//
// Not thread-safe: one caller at a time (the model keeps buffers between
// calls). Owns the trained model; borrows the caller's features and output.
#ifndef PST_PREDICT_LOADED_MODEL_H_
#define PST_PREDICT_LOADED_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "data/data_source.h"
#include "data/dataset.h"
#include "job/model_file.h"
#include "model/model.h"

namespace pst {

// "mlp_relu on 28x28x1 image, 10 classes", as predict prints it.
std::string ModelDescription(const TrainedModel& trained);

class LoadedModel {
 public:
  // Errors: ReadModelFile's (NotFound for a missing file), and MakeModel's
  // for a device that cannot be used.
  static StatusOr<std::unique_ptr<LoadedModel>> Open(const std::string& model_file,
                                                     const std::string& device = "cpu");
  // `model_file` only names the model in errors.
  static StatusOr<std::unique_ptr<LoadedModel>> Make(TrainedModel trained, std::string model_file,
                                                     const std::string& device = "cpu");

  const TrainedModel& trained() const { return trained_; }

  // `data`'s class probabilities into out[data.size x classes] (row-major).
  // InvalidArgument, naming both shapes, when the examples do not fit.
  Status PredictDataset(const Dataset& data, float* out);

  // `n` dense examples of shape `shape` laid end to end at `features`
  // (n x shape.size() floats, read only, never copied whole: one batch at a
  // time, as the model takes it); probabilities into out[n x classes]. A
  // flat shape of the model's size fits an image model. InvalidArgument for
  // a shape that does not fit, and for a click model (it needs sparse
  // features: PredictDataset on ReadTestFile's).
  Status PredictDense(const float* features, int64_t n, const InputShape& shape, float* out);

  // A click model's examples from `path` in `format` (criteo, libsvm or
  // libffm) as predict reads its --test_file, through the feature file the
  // model was trained with, if any. Errors: the reader's; InvalidArgument
  // for another format or a model that is no click model.
  StatusOr<Dataset> ReadTestFile(const std::string& path, const std::string& format) const;

  // The same from `lines` in memory, one example a line, as a file of them
  // would give (data/example_lines.h; the serve executable's requests).
  // Errors: the reader's, naming the line ("line 3: ..."); as ReadTestFile's.
  StatusOr<Dataset> ParseTestLines(const std::vector<std::string>& lines,
                                   const std::string& format) const;

 private:
  LoadedModel(TrainedModel trained, std::string model_file, std::unique_ptr<Model> model)
      : trained_(std::move(trained)),
        model_file_(std::move(model_file)),
        model_(std::move(model)) {}

  // ReadTestFile's and ParseTestLines' data options for `format`, made once:
  // parsing the feature file takes longer than a request of a few lines.
  StatusOr<const DataOptions*> TestDataOptions(const std::string& format) const;

  TrainedModel trained_;
  std::string model_file_;
  std::unique_ptr<Model> model_;
  mutable std::map<std::string, DataOptions> test_data_options_;  // by format
};

}  // namespace pst

#endif  // PST_PREDICT_LOADED_MODEL_H_
