// Helpers shared by the model tests (test-only): parameters, batches and
// gradient tensors to run models on, and how to compare their results.
#ifndef PST_MODEL_MODEL_TEST_UTIL_H_
#define PST_MODEL_MODEL_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/batch.h"
#include "common/input_shape.h"
#include "common/tensor.h"
#include "kernels/kernels.h"
#include "model/model.h"

namespace pst {

// MakeModel, CHECKed.
std::unique_ptr<Model> MustMakeModel(const std::string& name, const InputShape& input = 784,
                                     int64_t num_classes = 10, const std::string& device = "cpu",
                                     const KernelsOptions& options = {});

// Initial values, with biases made non-zero so that they matter too.
std::vector<Tensor> InitialParams(const Model& model, uint64_t seed);

// Uniform [0,1) features and uniform labels, the same for the same seed.
Batch RandomBatch(int64_t size, int64_t dim, int num_classes, uint32_t seed);

// Zero gradient tensors for `model` on 64-byte aligned memory. Eigen's
// vectorised reductions peel an unaligned head, so their summation order
// (and last bit) follows where the output lies; aligned tensors, like the
// back ends' 64-byte aligned buffers, make two runs bit-comparable.
std::vector<Tensor> AlignedGrads(const Model& model);

// EXPECTs `model` to have `reference`'s variables, the same names and
// shapes in the same order (a model split over devices keeps them).
void ExpectSameVariables(const Model& model, const Model& reference);

// Gradient checks by central differences of step kGradientCheckStep (the
// float step actually taken, not twice it), within kGradientCheckAbsTol +
// kGradientCheckRelTol * |numeric|.
constexpr float kGradientCheckStep = 1e-2f;
constexpr double kGradientCheckRelTol = 1e-3;
constexpr double kGradientCheckAbsTol = 1e-4;

// d f / d *v by central differences; *v is restored.
double NumericalDerivative(float* v, const std::function<double()>& f);

// EXPECTs analytic[i] to match d f / d values[i] for every i; `what` names
// them in failures.
void ExpectGradientsMatch(const std::vector<float>& analytic, float* values,
                          const std::function<double()>& f, const std::string& what);

// max over elements of |got - want|, over max |want| of the tensor: the
// normwise relative difference of two gradient tensors.
double NormwiseRelDiff(const Tensor& got, const Tensor& want);

}  // namespace pst

#endif  // PST_MODEL_MODEL_TEST_UTIL_H_
