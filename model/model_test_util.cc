#include "model/model_test_util.h"

#include <glog/logging.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <utility>

#include "model/layers/initializer.h"
#include "model/zoo/model_zoo.h"

namespace pst {

std::unique_ptr<Model> MustMakeModel(const std::string& name, const InputShape& input,
                                     int64_t num_classes, const std::string& device,
                                     const KernelsOptions& options) {
  auto model = MakeModel(name, input, num_classes, device, options);
  CHECK(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

std::vector<Tensor> InitialParams(const Model& model, uint64_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.2f, 0.2f);
  std::vector<Tensor> params;
  for (const VariableSpec& spec : model.variables()) {
    params.push_back(InitializeVariable(spec, seed));
    if (spec.initializer == Initializer::kZeros) {
      for (int64_t i = 0; i < params.back().num_elements(); ++i) {
        params.back().f32()[i] = dist(rng);
      }
    }
  }
  return params;
}

Batch RandomBatch(int64_t size, int64_t dim, int num_classes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, num_classes - 1);
  Batch batch;
  batch.size = size;
  batch.feature_dim = dim;
  for (int64_t i = 0; i < size * dim; ++i) batch.features.push_back(pixel(rng));
  for (int64_t i = 0; i < size; ++i) batch.labels.push_back(label(rng));
  return batch;
}

std::vector<Tensor> AlignedGrads(const Model& model) {
  std::vector<Tensor> grads;
  for (const VariableSpec& spec : model.variables()) {
    const size_t bytes = NumElements(spec.shape) * DTypeSize(spec.dtype);
    const size_t rounded = (bytes + 63) / 64 * 64;
    std::shared_ptr<uint8_t[]> memory(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)),
                                      [](uint8_t* p) { std::free(p); });
    CHECK(memory != nullptr);
    std::fill(memory.get(), memory.get() + rounded, 0);
    grads.push_back(Tensor::Wrap(spec.dtype, spec.shape, std::move(memory)));
  }
  return grads;
}

double NormwiseRelDiff(const Tensor& got, const Tensor& want) {
  CHECK_EQ(got.num_elements(), want.num_elements());
  double max_diff = 0, max_want = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    max_diff = std::max(max_diff, std::abs(double{got.f32()[i]} - double{want.f32()[i]}));
    max_want = std::max(max_want, std::abs(double{want.f32()[i]}));
  }
  return max_want == 0 ? max_diff : max_diff / max_want;
}

void ExpectSameVariables(const Model& model, const Model& reference) {
  ASSERT_EQ(model.variables().size(), reference.variables().size());
  for (size_t v = 0; v < reference.variables().size(); ++v) {
    EXPECT_EQ(model.variables()[v].name, reference.variables()[v].name);
    EXPECT_EQ(model.variables()[v].shape, reference.variables()[v].shape);
  }
}

double NumericalDerivative(float* v, const std::function<double()>& f) {
  const float saved = *v;
  *v = saved + kGradientCheckStep;
  const float hi = *v;
  const double f_hi = f();
  *v = saved - kGradientCheckStep;
  const float lo = *v;
  const double f_lo = f();
  *v = saved;
  return (f_hi - f_lo) / (double{hi} - double{lo});
}

void ExpectGradientsMatch(const std::vector<float>& analytic, float* values,
                          const std::function<double()>& f, const std::string& what) {
  for (size_t i = 0; i < analytic.size(); ++i) {
    const double numeric = NumericalDerivative(&values[i], f);
    EXPECT_NEAR(analytic[i], numeric,
                kGradientCheckAbsTol + kGradientCheckRelTol * std::abs(numeric))
        << what << "[" << i << "]";
  }
}

}  // namespace pst
