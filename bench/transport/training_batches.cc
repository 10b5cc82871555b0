#include "bench/transport/training_batches.h"

#include <cstdlib>
#include <memory>
#include <random>
#include <utility>

#include "bench/check_ok.h"
#include "data/dataset.h"
#include "data/idx_reader.h"
#include "data/input_pipeline.h"

namespace pst {
namespace {

TrainingBatches FromMnist(const char* dir, int64_t batch_size, int count) {
  TrainingBatches data;
  StatusOr<Dataset> train = LoadMnist(dir, /*train=*/true);
  CheckOk(train.status(), "LoadMnist");
  InputPipelineOptions options;
  options.batch_size = batch_size;
  options.seed = 1;
  StatusOr<std::unique_ptr<InputPipeline>> input = InputPipeline::Create(*train, options);
  CheckOk(input.status(), "InputPipeline");
  (*input)->Start();
  for (int i = 0; i < count; ++i) {
    StatusOr<PipelineBatch> next = (*input)->Next();
    CheckOk(next.status(), "InputPipeline::Next");
    data.batches.push_back(std::move(next->batch));
  }
  (*input)->Stop();
  data.source = "MNIST from MNIST_DIR=" + std::string(dir) + " (" + std::to_string(count) +
                " batches drawn through InputPipeline)";
  return data;
}

TrainingBatches Synthetic(int64_t batch_size, int count, int64_t input_dim, int64_t num_classes) {
  TrainingBatches data;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, static_cast<int32_t>(num_classes) - 1);
  for (int i = 0; i < count; ++i) {
    Batch b;
    b.size = batch_size;
    b.feature_dim = input_dim;
    b.features.resize(batch_size * input_dim);
    for (float& f : b.features) f = pixel(rng);
    b.labels.resize(batch_size);
    for (int32_t& l : b.labels) l = label(rng);
    data.batches.push_back(std::move(b));
  }
  data.source =
      "synthetic random batches (MNIST_DIR not set; " + std::to_string(count) + " batches)";
  return data;
}

}  // namespace

TrainingBatches MakeTrainingBatches(int64_t batch_size, int count, int64_t input_dim,
                                    int64_t num_classes) {
  const char* dir = std::getenv("MNIST_DIR");
  if (dir != nullptr && *dir != '\0') return FromMnist(dir, batch_size, count);
  return Synthetic(batch_size, count, input_dim, num_classes);
}

}  // namespace pst
