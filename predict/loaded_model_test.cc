#include "predict/loaded_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "model/zoo/model_zoo.h"
#include "predict/predictor.h"

namespace pst {
namespace {

// A `name` model for `input` and `classes` with recognisable parameters,
// standardized when asked (so the loop's standardization is exercised).
TrainedModel Trained(const std::string& name, const InputShape& input, int classes,
                     bool standardized) {
  TrainedModel trained;
  trained.model = name;
  trained.input = input;
  trained.num_classes = classes;
  if (standardized) {
    trained.standardization = Standardization{std::vector<float>(input.size(), 0.25f),
                                              std::vector<float>(input.size(), 1.5f)};
  }
  std::unique_ptr<Model> model = MakeModel(name, input, classes).value();
  for (const VariableSpec& spec : model->variables()) {
    Tensor t(DType::kFloat32, spec.shape);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = 0.01f * ((i * 7) % 23 - 11);
    trained.params.push_back(t);
  }
  return trained;
}

// `n` examples of `shape`, features varied, labels 0.
Dataset Examples(int64_t n, const InputShape& shape, int classes) {
  Dataset data;
  data.size = n;
  data.feature_dim = shape.size();
  data.example_shape = shape;
  data.num_classes = classes;
  data.features.resize(n * shape.size());
  for (size_t i = 0; i < data.features.size(); ++i) data.features[i] = 0.001f * (i % 1009);
  data.labels.assign(n, 0);
  return data;
}

// Over two batches and a part (the loop's batches are 1000 examples): the
// caller's buffer gives exactly what predict's data set path gives.
TEST(LoadedModelTest, DenseBufferGivesPredictsProbabilitiesToTheBit) {
  const TrainedModel trained = Trained("mlp_relu", 12, 3, /*standardized=*/true);
  const Dataset data = Examples(2345, 12, 3);
  const std::vector<float> expected = PredictProbabilities(trained, "m.bin", data).value();

  std::unique_ptr<LoadedModel> loaded = LoadedModel::Make(trained, "m.bin").value();
  std::vector<float> got(data.size * 3, -1.0f);
  ASSERT_TRUE(loaded->PredictDense(data.features.data(), data.size, 12, got.data()).ok());
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)));
  // Called again, the kept model gives the same.
  std::vector<float> again(got.size());
  ASSERT_TRUE(loaded->PredictDense(data.features.data(), data.size, 12, again.data()).ok());
  EXPECT_EQ(got, again);
}

TEST(LoadedModelTest, ImagesFitAsImagesOrFlat) {
  const InputShape image({6, 6, 1});
  std::unique_ptr<LoadedModel> loaded =
      LoadedModel::Make(Trained("cnn", image, 4, false), "cnn.bin").value();
  const Dataset data = Examples(5, image, 4);
  std::vector<float> as_image(5 * 4), flat(5 * 4);
  ASSERT_TRUE(loaded->PredictDense(data.features.data(), 5, image, as_image.data()).ok());
  ASSERT_TRUE(loaded->PredictDense(data.features.data(), 5, 36, flat.data()).ok());
  EXPECT_EQ(as_image, flat);
  float sum = 0;
  for (int c = 0; c < 4; ++c) sum += as_image[c];
  EXPECT_NEAR(sum, 1.0f, 1e-5);
}

TEST(LoadedModelTest, AShapeThatDoesNotFitNamesBoth) {
  std::unique_ptr<LoadedModel> loaded =
      LoadedModel::Make(Trained("cnn", InputShape({6, 6, 1}), 4, false), "cnn.bin").value();
  const std::vector<float> features(2 * 36);
  std::vector<float> out(2 * 4);
  const Status flat = loaded->PredictDense(features.data(), 2, 35, out.data());
  EXPECT_EQ(flat.code(), Code::kInvalidArgument);
  EXPECT_NE(flat.message().find("35 features"), std::string::npos) << flat.ToString();
  EXPECT_NE(flat.message().find("6x6x1 image"), std::string::npos) << flat.ToString();
  const Status image = loaded->PredictDense(features.data(), 2, InputShape({6, 3, 2}), out.data());
  EXPECT_EQ(image.code(), Code::kInvalidArgument);
}

TEST(LoadedModelTest, DescriptionIsPredicts) {
  EXPECT_EQ(ModelDescription(Trained("mlp", 12, 3, false)), "mlp on 12 features, 3 classes");
}

TEST(LoadedModelTest, OnlyAClickModelReadsClickLogs) {
  std::unique_ptr<LoadedModel> loaded =
      LoadedModel::Make(Trained("mlp", 12, 3, false), "m.bin").value();
  const StatusOr<Dataset> read = loaded->ReadTestFile("/nonexistent", "criteo");
  EXPECT_EQ(read.status().code(), Code::kInvalidArgument);
  EXPECT_NE(read.status().message().find("no click model"), std::string::npos);
}

TEST(LoadedModelTest, AMissingModelFileIsNotFound) {
  EXPECT_EQ(LoadedModel::Open("/nonexistent/model.bin").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pst
