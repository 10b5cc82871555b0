// The model zoo and SequentialModel: variables, whole-model gradients against
// finite differences, input validation, and that SGD actually learns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/layers/initializer.h"
#include "model/model_test_util.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

int64_t CountParameters(const Model& model) {
  int64_t n = 0;
  for (const VariableSpec& spec : model.variables()) n += NumElements(spec.shape);
  return n;
}

TEST(ModelZooTest, MlpVariables) {
  auto model = MustMakeModel("mlp");
  const std::vector<VariableSpec>& v = model->variables();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "dense0/weights");
  EXPECT_EQ(v[0].shape, (Shape{784, 100}));
  EXPECT_EQ(v[1].name, "dense0/bias");
  EXPECT_EQ(v[1].shape, (Shape{100}));
  EXPECT_EQ(v[2].name, "dense1/weights");
  EXPECT_EQ(v[2].shape, (Shape{100, 10}));
  EXPECT_EQ(v[3].name, "dense1/bias");
  EXPECT_EQ(v[3].shape, (Shape{10}));
  EXPECT_EQ(model->input_dim(), 784);
  EXPECT_EQ(model->num_classes(), 10);
}

TEST(ModelZooTest, ParameterCounts) {
  EXPECT_EQ(CountParameters(*MustMakeModel("mlp")), 784 * 100 + 100 + 100 * 10 + 10);
  EXPECT_EQ(CountParameters(*MustMakeModel("mlp_relu")),
            784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  auto wide = MustMakeModel("wide_mlp");
  EXPECT_EQ(wide->variables().size(), 6u);
  EXPECT_EQ(CountParameters(*wide), 784 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 10 + 10);
}

TEST(ModelZooTest, CnnVariables) {
  auto model = MustMakeModel("cnn");
  const std::vector<VariableSpec>& v = model->variables();
  const std::vector<std::pair<std::string, Shape>> want = {
      {"conv0/weights", {5, 5, 1, 20}},  {"conv0/bias", {20}},
      {"conv1/weights", {5, 5, 20, 50}}, {"conv1/bias", {50}},
      {"dense0/weights", {800, 500}},    {"dense0/bias", {500}},
      {"dense1/weights", {500, 10}},     {"dense1/bias", {10}},
  };
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(v[i].name, want[i].first);
    EXPECT_EQ(v[i].shape, want[i].second) << v[i].name;
  }
  EXPECT_EQ(CountParameters(*model), 431080);
  EXPECT_EQ(model->input_dim(), 784);
  EXPECT_EQ(MustMakeModel("cnn", 784, 3)->num_classes(), 3);
  // Images of any shape; features only when they make a square image.
  const StatusOr<std::unique_ptr<Model>> flat = MakeModel("cnn", 101);
  EXPECT_EQ(flat.status().code(), Code::kInvalidArgument);
  EXPECT_NE(flat.status().message().find("model 'cnn' takes an image"), std::string::npos)
      << flat.status().message();
  EXPECT_EQ(MustMakeModel("cnn", 100)->input_dim(), 100);  // 10x10x1
  // CIFAR's 32x32x3 (no padding) and a small 8x8x3 (padded stages).
  EXPECT_EQ(MustMakeModel("cnn", InputShape({32, 32, 3}))->input_dim(), 3072);
  EXPECT_EQ(MustMakeModel("cnn", InputShape({8, 8, 3}), 4)->input_dim(), 192);
}

TEST(ModelZooTest, CnnPlacementListsEveryLayerAndTheLoss) {
  auto model = MustMakeModel("cnn");
  EXPECT_EQ(model->device(), "cpu");
  EXPECT_EQ(model->Placement(), (std::vector<std::string>{
                                    "conv0 (Conv2D 5x5x1->20) on cpu",
                                    "relu (11520) on cpu",
                                    "max_pool (2x2, 24x24x20->12x12x20) on cpu",
                                    "conv1 (Conv2D 5x5x20->50) on cpu",
                                    "relu (3200) on cpu",
                                    "max_pool (2x2, 8x8x50->4x4x50) on cpu",
                                    "dense0 (Dense 800->500) on cpu",
                                    "relu (500) on cpu",
                                    "dense1 (Dense 500->10) on cpu",
                                    "softmax_cross_entropy (10 classes) on cpu",
                                }));
}

TEST(ModelZooTest, Errors) {
  auto unknown = MakeModel("resnet");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  for (const std::string& name : ModelNames()) {
    EXPECT_NE(unknown.status().message().find(name), std::string::npos)
        << unknown.status().message();
  }
  EXPECT_EQ(MakeModel("mlp", 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MakeModel("mlp", 784, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MakeModel("mlp", 784, 10, "gpu:99").status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(MakeModel("mlp", 784, 10, "abacus").status().code(), Code::kInvalidArgument);
}

struct GradientCheck {
  float eps;              // the central-difference step
  double abs_tol = 2e-4;  // plus 1% of the numerical derivative
  InputShape input = 20;  // of the model and the random batch
  int64_t batch_size = 6;
};

// Gradients of the whole model against central differences of its loss, at
// a few random coordinates of every variable, on the given cpu kernels.
void CheckModelGradients(const std::string& name, const GradientCheck& check, CpuKernelsKind kind) {
  SCOPED_TRACE(name + " on " + CpuKernelsName(kind));
  const float eps = check.eps;
  KernelsOptions options;
  options.cpu_kernels = kind;
  auto model = MustMakeModel(name, check.input, /*num_classes=*/4, "cpu", options);
  std::vector<Tensor> params = InitialParams(*model, 5);
  const Batch batch = RandomBatch(check.batch_size, check.input.size(), 4, 6);
  std::vector<Tensor> grads;
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());

  const auto loss = [&]() {
    std::vector<Tensor> scratch;
    return double{model->ComputeGradients(params, batch, &scratch).value()};
  };
  std::mt19937 rng(8);
  for (size_t v = 0; v < params.size(); ++v) {
    std::uniform_int_distribution<int64_t> pick(0, params[v].num_elements() - 1);
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t i = pick(rng);
      float* p = &params[v].f32()[i];
      const float saved = *p;
      *p = saved + eps;
      const float hi = *p;
      const double loss_hi = loss();
      *p = saved - eps;
      const float lo = *p;
      const double loss_lo = loss();
      *p = saved;
      const double numeric = (loss_hi - loss_lo) / (double{hi} - double{lo});
      EXPECT_NEAR(grads[v].f32()[i], numeric, check.abs_tol + 1e-2 * std::abs(numeric))
          << model->variables()[v].name << "[" << i << "]";
    }
  }
}

// The gradient checks, on each cpu kernels this build has.
class GradientCheckTest : public ::testing::TestWithParam<CpuKernelsKind> {};

TEST_P(GradientCheckTest, MlpGradientsMatchFiniteDifferences) {
  CheckModelGradients("mlp", {1e-2f}, GetParam());
}

TEST_P(GradientCheckTest, MlpReluGradientsMatchFiniteDifferences) {
  // A smaller step: fewer ReLU kinks crossed.
  CheckModelGradients("mlp_relu", {1e-3f}, GetParam());
}

TEST_P(GradientCheckTest, CnnGradientsMatchFiniteDifferences) {
  // A convolution weight moves every pixel of its channel, so a step of
  // 1e-3 already crosses many ReLU and max-pool kinks (errors near 1e-3).
  // A smaller step meets the float loss's rounding instead: 1.2e-7 / (2 *
  // eps) = 2e-4 at eps = 3e-4, hence the looser absolute tolerance. A batch
  // of 3 images keeps the ~100 loss evaluations quick.
  CheckModelGradients("cnn",
                      {/*eps=*/3e-4f, /*abs_tol=*/5e-4,
                       /*input=*/784, /*batch_size=*/3},
                      GetParam());
}

// Small colour images: both stages padded.
TEST_P(GradientCheckTest, CnnOnSmallColourImagesMatchesFiniteDifferences) {
  CheckModelGradients("cnn",
                      {/*eps=*/3e-4f, /*abs_tol=*/5e-4,
                       /*input=*/InputShape({8, 8, 3}), /*batch_size=*/3},
                      GetParam());
}

// A model of the user's own: convolutions (same and strided), pooling,
// dense layers, both activations.
TEST_P(GradientCheckTest, SpecModelGradientsMatchFiniteDifferences) {
  CheckModelGradients(SpecModelName("conv 3x3 4 same relu\nmaxpool 2\nconv 3x3 6 stride 2 "
                                    "sigmoid\ndense 12 relu\ndense classes\n"),
                      {/*eps=*/3e-4f, /*abs_tol=*/5e-4,
                       /*input=*/InputShape({8, 8, 2}), /*batch_size=*/3},
                      GetParam());
}

INSTANTIATE_TEST_SUITE_P(CpuKernels, GradientCheckTest, ::testing::ValuesIn(AvailableCpuKernels()),
                         [](const ::testing::TestParamInfo<CpuKernelsKind>& info) {
                           return std::string(CpuKernelsName(info.param));
                         });

// The same gradients within float rounding (1e-5 relative): bit equality
// is not promised, as vectorised reductions peel unaligned heads, so their
// summation order follows the buffers' alignment.
void ExpectSameGradients(const Model& model, const std::vector<Tensor>& expected,
                         const std::vector<Tensor>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t v = 0; v < expected.size(); ++v) {
    SCOPED_TRACE(model.variables()[v].name);
    for (int64_t i = 0; i < expected[v].num_elements(); ++i) {
      const float a = expected[v].f32()[i], b = actual[v].f32()[i];
      ASSERT_NEAR(a, b, 1e-5f * std::max(1.0f, std::abs(a))) << "element " << i;
    }
  }
}

TEST(SequentialModelTest, GradientsAreOverwrittenNotAccumulated) {
  for (const char* name : {"mlp_relu", "cnn"}) {
    SCOPED_TRACE(name);
    auto model = MustMakeModel(name);
    const std::vector<Tensor> params = InitialParams(*model, 1);
    const Batch batch = RandomBatch(16, 784, 10, 2);
    std::vector<Tensor> first, second;
    const float loss1 = model->ComputeGradients(params, batch, &first).value();
    for (const Tensor& t : first) second.push_back(t.Clone());
    // A different batch size in between resizes the scratch buffers.
    ASSERT_TRUE(model->ComputeGradients(params, RandomBatch(5, 784, 10, 3), &second).ok());
    const float loss2 = model->ComputeGradients(params, batch, &second).value();
    EXPECT_NEAR(loss1, loss2, 1e-6f * std::abs(loss1));
    // Accumulating would double the gradients.
    ExpectSameGradients(*model, first, second);
  }
}

// Wait-free backpropagation's contract: each layer's variables reported
// once, last layer first, with gradients already final when reported (a
// worker sends them at once), and the same step as ComputeGradients.
TEST(SequentialModelTest, StreamedGradientsAreReportedLayerByLayerAndFinal) {
  for (const char* name : {"mlp_relu", "cnn"}) {
    SCOPED_TRACE(name);
    auto model = MustMakeModel(name);
    const std::vector<Tensor> params = InitialParams(*model, 1);
    const Batch batch = RandomBatch(16, 784, 10, 2);
    std::vector<Tensor> whole;
    const float whole_loss = model->ComputeGradients(params, batch, &whole).value();

    std::vector<Tensor> grads;
    std::vector<std::pair<int, int>> reports;
    std::vector<Tensor> at_report(model->variables().size());
    const float loss = model
                           ->ComputeGradientsStreamed(params, batch, &grads,
                                                      [&](int first, int end) {
                                                        reports.emplace_back(first, end);
                                                        for (int v = first; v < end; ++v) {
                                                          at_report[v] = grads[v].Clone();
                                                        }
                                                      })
                           .value();
    EXPECT_EQ(loss, whole_loss);
    ASSERT_GE(reports.size(), 2u);
    int expected_end = static_cast<int>(model->variables().size());
    for (const auto& [first, end] : reports) {  // contiguous, from the last variable down
      EXPECT_EQ(end, expected_end);
      EXPECT_LT(first, end);
      expected_end = first;
    }
    EXPECT_EQ(expected_end, 0);
    for (size_t v = 0; v < grads.size(); ++v) {
      SCOPED_TRACE(model->variables()[v].name);
      ASSERT_EQ(at_report[v].num_bytes(), grads[v].num_bytes());
      EXPECT_EQ(std::memcmp(at_report[v].data(), grads[v].data(), grads[v].num_bytes()), 0);
    }
    ExpectSameGradients(*model, whole, grads);
  }
}

TEST(SequentialModelTest, EvaluateMatchesComputeGradients) {
  for (const char* name : {"mlp", "cnn"}) {
    SCOPED_TRACE(name);
    auto model = MustMakeModel(name);
    const std::vector<Tensor> params = InitialParams(*model, 1);
    const Batch batch = RandomBatch(32, 784, 10, 2);
    std::vector<Tensor> grads;
    const float loss = model->ComputeGradients(params, batch, &grads).value();
    const Model::EvalResult eval = model->Evaluate(params, batch).value();
    EXPECT_EQ(eval.count, 32);
    EXPECT_NEAR(eval.loss_sum, 32.0 * loss, 1e-4 * eval.loss_sum);
    EXPECT_GE(eval.correct, 0);
    EXPECT_LE(eval.correct, 32);
  }
}

TEST(SequentialModelTest, RejectsMismatchedParamsGradsAndBatches) {
  auto model = MustMakeModel("mlp");
  std::vector<Tensor> params = InitialParams(*model, 1);
  const Batch good = RandomBatch(4, 784, 10, 2);
  std::vector<Tensor> grads;
  ASSERT_TRUE(model->ComputeGradients(params, good, &grads).ok());

  const auto expect_invalid = [&](const std::vector<Tensor>& p, const Batch& b,
                                  std::vector<Tensor>* g, const char* what) {
    auto loss = model->ComputeGradients(p, b, g);
    ASSERT_FALSE(loss.ok()) << what;
    EXPECT_EQ(loss.status().code(), Code::kInvalidArgument) << what;
    auto eval = model->Evaluate(p, b);
    if (g == &grads) {  // only params and batch matter to Evaluate
      ASSERT_FALSE(eval.ok()) << what;
      EXPECT_EQ(eval.status().code(), Code::kInvalidArgument) << what;
    }
  };

  std::vector<Tensor> too_few(params.begin(), params.end() - 1);
  expect_invalid(too_few, good, &grads, "too few params");
  std::vector<Tensor> transposed = params;
  transposed[0] = Tensor(DType::kFloat32, {100, 784});
  expect_invalid(transposed, good, &grads, "transposed weights");
  std::vector<Tensor> wrong_dtype = params;
  wrong_dtype[1] = Tensor(DType::kInt64, {100});
  expect_invalid(wrong_dtype, good, &grads, "int64 bias");

  Batch bad = good;
  bad.feature_dim = 783;
  expect_invalid(params, bad, &grads, "feature_dim");
  bad = good;
  bad.features.pop_back();
  expect_invalid(params, bad, &grads, "short features");
  bad = good;
  bad.labels.push_back(0);
  expect_invalid(params, bad, &grads, "extra label");
  bad = good;
  bad.labels[2] = 10;
  expect_invalid(params, bad, &grads, "label out of range");
  bad = good;
  bad.labels[1] = -1;
  expect_invalid(params, bad, &grads, "negative label");
  bad = Batch{0, 784, {}, {}};
  expect_invalid(params, bad, &grads, "empty batch");

  std::vector<Tensor> wrong_grads = grads;
  wrong_grads[2] = Tensor(DType::kFloat32, {10, 100});
  expect_invalid(params, good, &wrong_grads, "wrong grad shape");
}

// Points in [0,1]^D labelled by the argmax of a fixed random linear map:
// linearly separable, so every model here should fit it.
Batch TeacherBatch(int64_t size, int64_t dim, int num_classes, const std::vector<float>& teacher,
                   std::mt19937* rng) {
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  Batch batch;
  batch.size = size;
  batch.feature_dim = dim;
  for (int64_t i = 0; i < size; ++i) {
    std::vector<double> scores(num_classes, 0.0);
    for (int64_t d = 0; d < dim; ++d) {
      const float x = pixel(*rng);
      batch.features.push_back(x);
      for (int c = 0; c < num_classes; ++c) scores[c] += x * teacher[d * num_classes + c];
    }
    batch.labels.push_back(
        static_cast<int32_t>(std::max_element(scores.begin(), scores.end()) - scores.begin()));
  }
  return batch;
}

void CheckSgdLearns(const std::string& name, float learning_rate) {
  SCOPED_TRACE(name);
  const int64_t dim = 8;
  const int classes = 3;
  auto model = MustMakeModel(name, dim, classes);
  std::vector<Tensor> params;
  for (const VariableSpec& spec : model->variables()) {
    params.push_back(InitializeVariable(spec, 11));
  }
  std::mt19937 rng(12);
  std::normal_distribution<float> normal;
  std::vector<float> teacher(dim * classes);
  for (float& t : teacher) t = normal(rng);
  const Batch test = TeacherBatch(1000, dim, classes, teacher, &rng);

  const double initial_loss = model->Evaluate(params, test).value().loss_sum / test.size;
  std::vector<Tensor> grads;
  for (int step = 0; step < 400; ++step) {
    const Batch batch = TeacherBatch(32, dim, classes, teacher, &rng);
    ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
    for (size_t v = 0; v < params.size(); ++v) {
      for (int64_t i = 0; i < params[v].num_elements(); ++i) {
        params[v].f32()[i] -= learning_rate * grads[v].f32()[i];
      }
    }
  }
  const Model::EvalResult eval = model->Evaluate(params, test).value();
  const double final_loss = eval.loss_sum / eval.count;
  EXPECT_LT(final_loss, 0.5 * initial_loss);
  EXPECT_GT(static_cast<double>(eval.correct) / eval.count, 0.85)
      << "loss " << initial_loss << " -> " << final_loss;
}

TEST(SequentialModelTest, SgdLearnsASeparableProblem) {
  CheckSgdLearns("mlp", 1.0f);
  CheckSgdLearns("mlp_relu", 0.2f);
}

// 28x28 images of one stroke on faint noise, at a random place: class 0 a
// horizontal bar, 1 a vertical bar, 2 a square. Telling them apart anywhere
// in the image is what convolutions are for.
Batch StrokeBatch(int64_t size, std::mt19937* rng) {
  std::uniform_real_distribution<float> noise(0.0f, 0.2f);
  std::uniform_int_distribution<int> kind(0, 2), place(0, 28 - 8);
  Batch batch;
  batch.size = size;
  batch.feature_dim = 28 * 28;
  for (int64_t i = 0; i < size; ++i) {
    const int label = kind(*rng);
    const int top = place(*rng), left = place(*rng);
    const int height = label == 0 ? 2 : label == 1 ? 8 : 4;
    const int width = label == 0 ? 8 : label == 1 ? 2 : 4;
    for (int h = 0; h < 28; ++h) {
      for (int w = 0; w < 28; ++w) {
        const bool ink = h >= top && h < top + height && w >= left && w < left + width;
        batch.features.push_back(ink ? 1.0f : noise(*rng));
      }
    }
    batch.labels.push_back(label);
  }
  return batch;
}

TEST(SequentialModelTest, CnnSgdLearnsStrokes) {
  auto model = MustMakeModel("cnn", 784, 3);
  std::vector<Tensor> params;
  for (const VariableSpec& spec : model->variables()) {
    params.push_back(InitializeVariable(spec, 11));
  }
  std::mt19937 rng(13);
  const Batch test = StrokeBatch(300, &rng);
  const double initial_loss = model->Evaluate(params, test).value().loss_sum / test.size;
  std::vector<Tensor> grads;
  for (int step = 0; step < 200; ++step) {
    ASSERT_TRUE(model->ComputeGradients(params, StrokeBatch(16, &rng), &grads).ok());
    for (size_t v = 0; v < params.size(); ++v) {
      for (int64_t i = 0; i < params[v].num_elements(); ++i) {
        params[v].f32()[i] -= 0.1f * grads[v].f32()[i];
      }
    }
  }
  const Model::EvalResult eval = model->Evaluate(params, test).value();
  const double final_loss = eval.loss_sum / eval.count;
  EXPECT_LT(final_loss, 0.5 * initial_loss);
  EXPECT_GT(static_cast<double>(eval.correct) / eval.count, 0.9)
      << "loss " << initial_loss << " -> " << final_loss;
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

TEST(ModelZooTest, EveryModelHasARecommendedLearningRate) {
  for (const std::string& name : ModelNames()) {
    auto rate = RecommendedLearningRate(name);
    ASSERT_TRUE(rate.ok()) << name;
    EXPECT_GT(*rate, 0.0f) << name;
  }
  EXPECT_EQ(RecommendedLearningRate("resnet").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst
