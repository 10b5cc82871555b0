#include "model/model_zoo.h"

#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "model/activations.h"
#include "model/dense.h"
#include "model/sequential_model.h"

namespace pst {
namespace {

enum class Activation { kSigmoid, kRelu };

struct MlpSpec {
  const char* name;
  std::vector<int64_t> hidden;  // widths of the hidden layers
  Activation activation;
};

std::vector<MlpSpec> Mlps() {
  return {
      {"mlp", {100}, Activation::kSigmoid},
      {"mlp_relu", {256, 128}, Activation::kRelu},
      {"wide_mlp", {2048, 2048}, Activation::kRelu},
  };
}

// Dense layers "dense0", "dense1", ... with the activation between them
// (none after the last: the loss takes logits).
std::vector<std::unique_ptr<Layer>> MlpLayers(const MlpSpec& spec,
                                              int64_t input_dim,
                                              int64_t num_classes,
                                              Kernels& kernels) {
  std::vector<int64_t> widths = {input_dim};
  widths.insert(widths.end(), spec.hidden.begin(), spec.hidden.end());
  widths.push_back(num_classes);

  std::vector<std::unique_ptr<Layer>> layers;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    layers.push_back(std::make_unique<Dense>(
        "dense" + std::to_string(i), widths[i], widths[i + 1], kernels));
    if (i + 2 == widths.size()) break;
    if (spec.activation == Activation::kSigmoid) {
      layers.push_back(std::make_unique<Sigmoid>(widths[i + 1], kernels));
    } else {
      layers.push_back(std::make_unique<Relu>(widths[i + 1], kernels));
    }
  }
  return layers;
}

}  // namespace

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const MlpSpec& spec : Mlps()) names.push_back(spec.name);
  return names;
}

StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name,
                                           int64_t input_dim,
                                           int64_t num_classes,
                                           const std::string& device) {
  const std::vector<MlpSpec> mlps = Mlps();
  const MlpSpec* spec = nullptr;
  for (const MlpSpec& s : mlps) {
    if (name == s.name) spec = &s;
  }
  if (spec == nullptr) {
    std::string known;
    for (const MlpSpec& s : mlps) {
      known += std::string(known.empty() ? "" : ", ") + s.name;
    }
    return InvalidArgument("unknown model '" + name +
                           "'; known models: " + known);
  }
  if (input_dim <= 0 || num_classes < 2) {
    return InvalidArgument("model '" + name + "' needs input_dim > 0 and " +
                           "num_classes >= 2, got " +
                           std::to_string(input_dim) + " and " +
                           std::to_string(num_classes));
  }
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> kernels, MakeKernels(device));
  auto layers = MlpLayers(*spec, input_dim, num_classes, *kernels);
  return std::unique_ptr<Model>(
      new SequentialModel(std::move(kernels), std::move(layers)));
}

}  // namespace pst
