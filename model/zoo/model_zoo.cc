#include "model/zoo/model_zoo.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/split.h"
#include "kernels/cpu_kernels.h"
#include "kernels/kernels.h"
#include "model/ctr/ctr_spec.h"
#include "model/layers/activations.h"
#include "model/layers/conv2d.h"
#include "model/layers/dense.h"
#include "model/layers/max_pool.h"
#include "model/parallel/tower_model.h"
#include "model/sequential_model.h"
#include "model/zoo/model_spec.h"

namespace pst {
namespace {

using LayerStack = std::vector<std::unique_ptr<Layer>>;

enum class Activation { kSigmoid, kRelu };

struct MlpSpec {
  const char* name;
  std::vector<int64_t> hidden;  // widths of the hidden layers
  Activation activation;
  float learning_rate;  // recommended for plain SGD, batch 100
};

std::vector<MlpSpec> Mlps() {
  return {
      {"mlp", {100}, Activation::kSigmoid, 0.3f},
      {"mlp_relu", {256, 128}, Activation::kRelu, 0.3f},
      {"wide_mlp", {2048, 2048}, Activation::kRelu, 0.05f},
  };
}

// Dense layers "dense0", "dense1", ... with the activation between them
// (none after the last: the loss takes logits).
LayerStack MlpLayers(const MlpSpec& spec, int64_t input_dim, int64_t num_classes,
                     Kernels& kernels) {
  std::vector<int64_t> widths = {input_dim};
  widths.insert(widths.end(), spec.hidden.begin(), spec.hidden.end());
  widths.push_back(num_classes);

  LayerStack layers;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    layers.push_back(
        std::make_unique<Dense>("dense" + std::to_string(i), widths[i], widths[i + 1], kernels));
    if (i + 2 == widths.size()) break;
    if (spec.activation == Activation::kSigmoid) {
      layers.push_back(std::make_unique<Sigmoid>(widths[i + 1], kernels));
    } else {
      layers.push_back(std::make_unique<Relu>(widths[i + 1], kernels));
    }
  }
  return layers;
}

// The image a cnn reads: an image shape as it is; D features taken as a
// square single-channel image when D is a square (784: MNIST's 28x28x1).
StatusOr<InputShape> CnnImage(const InputShape& input) {
  if (input.is_image()) return input;
  for (int64_t side = 1; side * side <= input.size(); ++side) {
    if (side * side == input.size()) return InputShape({side, side, 1});
  }
  return InvalidArgument("model 'cnn' takes an image (HxWxC), got " + input.ToString());
}

// LeNet: two stages of 5x5 convolution (stride 1), ReLU and 2x2 max-pool,
// with 20 then 50 filters, then dense 500, ReLU, dense num_classes. A stage
// on a side of 12 or more convolves without padding (MNIST: 28 -> 24 -> 12,
// 12 -> 8 -> 4); on a smaller side it pads by 2 (keeping the side), so that
// small images (8x8) still leave a pixel after both pools.
LayerStack CnnLayers(const InputShape& image, int64_t num_classes, Kernels& kernels) {
  struct Stage {
    const char* name;
    int64_t filters;
  };
  LayerStack layers;
  int64_t height = image.height(), width = image.width(), channels = image.channels();
  for (const Stage& stage : {Stage{"conv0", 20}, Stage{"conv1", 50}}) {
    Conv2DShape shape;
    shape.height = height;
    shape.width = width;
    shape.in_channels = channels;
    shape.filter_height = shape.filter_width = 5;
    shape.out_channels = stage.filters;
    shape.padding = std::min(height, width) >= 12 ? 0 : 2;
    const int64_t conv_height = shape.out_height(), conv_width = shape.out_width();
    layers.push_back(std::make_unique<Conv2D>(stage.name, shape, kernels));
    layers.push_back(std::make_unique<Relu>(conv_height * conv_width * stage.filters, kernels));
    layers.push_back(std::make_unique<MaxPool2x2>(conv_height, conv_width, stage.filters, kernels));
    height = conv_height / 2;
    width = conv_width / 2;
    channels = stage.filters;
  }
  // The pooled images, flattened in NHWC order.
  const int64_t features = height * width * channels;
  layers.push_back(std::make_unique<Dense>("dense0", features, 500, kernels));
  layers.push_back(std::make_unique<Relu>(500, kernels));
  layers.push_back(std::make_unique<Dense>("dense1", 500, num_classes, kernels));
  return layers;
}

// A model of the zoo: its name, the input it takes (InvalidArgument naming
// both sides when not) and its layers for (input, num_classes).
struct ZooModel {
  std::string name;
  float learning_rate;  // plain SGD, batch 100: measured on MNIST
  std::function<StatusOr<InputShape>(const InputShape& input)> takes;
  std::function<LayerStack(const InputShape& input, int64_t num_classes, Kernels& kernels)> layers;
};

std::vector<ZooModel> Zoo();

Status UnknownModel(const std::string& name) {
  std::string known;
  for (const ZooModel& m : Zoo()) known += (known.empty() ? "" : ", ") + m.name;
  return InvalidArgument("unknown model '" + name + "'; known models: " + known);
}

std::vector<ZooModel> Zoo() {
  std::vector<ZooModel> zoo;
  for (const MlpSpec& spec : Mlps()) {
    zoo.push_back({spec.name, spec.learning_rate,
                   // Any input, flattened.
                   [](const InputShape& input) { return StatusOr<InputShape>(input); },
                   [spec](const InputShape& input, int64_t num_classes, Kernels& kernels) {
                     return MlpLayers(spec, input.size(), num_classes, kernels);
                   }});
  }
  // 0.3 diverges (a dead network); 0.1 reaches 0.988 in 2000 async steps.
  zoo.push_back(
      {"cnn", 0.1f, CnnImage, [](const InputShape& input, int64_t num_classes, Kernels& kernels) {
         return CnnLayers(*CnnImage(input), num_classes, kernels);
       }});
  return zoo;
}

constexpr char kSpecPrefix[] = "spec:";

// A model spec (model/zoo/model_spec.h) as a model of the zoo (learning_rate 0: none given).
StatusOr<ZooModel> SpecModel(const std::string& name) {
  PST_ASSIGN_OR_RETURN(ModelSpec parsed,
                       ParseModelSpec(name.substr(sizeof(kSpecPrefix) - 1), "model spec"));
  auto spec = std::make_shared<const ModelSpec>(std::move(parsed));
  ZooModel model;
  model.name = name;
  model.learning_rate = spec->learning_rate.value_or(0);
  model.takes = [spec](const InputShape& input) -> StatusOr<InputShape> {
    CpuKernels probe;  // layers allocate nothing until Reserve
    PST_RETURN_IF_ERROR(SpecLayers(*spec, input, 2, probe).status());
    return input;
  };
  model.layers = [spec](const InputShape& input, int64_t num_classes, Kernels& kernels) {
    return std::move(SpecLayers(*spec, input, num_classes, kernels)).value();
  };
  return model;
}

// The model called `name` (of the zoo, or a spec), if the input and
// classes suit it.
StatusOr<ZooModel> FindModel(const std::string& name, const InputShape& input,
                             int64_t num_classes) {
  std::optional<ZooModel> model;
  if (IsSpecModel(name)) {
    PST_ASSIGN_OR_RETURN(model, SpecModel(name));
  }
  for (const ZooModel& m : Zoo()) {
    if (name == m.name) model = m;
  }
  if (!model) return UnknownModel(name);
  if (input.size() <= 0 || num_classes < 2) {
    return InvalidArgument("model '" + name + "' needs an input of at least one value and " +
                           "num_classes >= 2, got " + input.ToString() + " and " +
                           std::to_string(num_classes));
  }
  PST_RETURN_IF_ERROR(model->takes(input).status());
  return *model;
}

}  // namespace

bool IsSpecModel(const std::string& name) { return name.rfind(kSpecPrefix, 0) == 0; }

std::string SpecModelName(const std::string& spec_text) { return kSpecPrefix + spec_text; }

StatusOr<float> RecommendedLearningRate(const std::string& name) {
  if (IsSpecModel(name)) {
    PST_ASSIGN_OR_RETURN(ZooModel spec, SpecModel(name));
    if (spec.learning_rate > 0) return spec.learning_rate;
    return InvalidArgument("the model spec has no 'learning_rate R' line to recommend a rate");
  }
  for (const ZooModel& model : Zoo()) {
    if (model.name == name) return model.learning_rate;
  }
  return UnknownModel(name);
}

StatusOr<SpecTraining> SpecTrainingSettings(const std::string& name) {
  if (!IsSpecModel(name)) return SpecTraining();
  const std::string text = name.substr(sizeof(kSpecPrefix) - 1);
  if (IsClickSpec(text)) return SpecTraining();  // its format has no such lines
  PST_ASSIGN_OR_RETURN(ModelSpec spec, ParseModelSpec(text, "model spec"));
  return spec.training;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const ZooModel& model : Zoo()) names.push_back(model.name);
  return names;
}

Status CheckModelTakes(const std::string& name, const InputShape& input, int64_t num_classes) {
  return FindModel(name, input, num_classes).status();
}

StatusOr<LayerStack> MakeLayers(const std::string& name, const InputShape& input,
                                int64_t num_classes, Kernels& kernels) {
  PST_ASSIGN_OR_RETURN(const ZooModel model, FindModel(name, input, num_classes));
  return model.layers(input, num_classes, kernels);
}

StatusOr<std::unique_ptr<Model>> MakeModelOnKernels(const std::string& name,
                                                    const InputShape& input, int64_t num_classes,
                                                    std::vector<std::unique_ptr<Kernels>> kernels) {
  PST_ASSIGN_OR_RETURN(const ZooModel model, FindModel(name, input, num_classes));
  if (kernels.empty()) return InvalidArgument("no device to run on");
  std::vector<std::unique_ptr<Model>> towers;
  for (std::unique_ptr<Kernels>& k : kernels) {
    LayerStack layers = model.layers(input, num_classes, *k);
    towers.push_back(std::make_unique<SequentialModel>(std::move(k), std::move(layers)));
  }
  if (towers.size() == 1) return std::move(towers.front());
  return std::unique_ptr<Model>(new TowerModel(std::move(towers)));
}

StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name, const InputShape& input,
                                           int64_t num_classes, const std::string& device,
                                           const KernelsOptions& options) {
  // Checked before any device is touched: starting a GPU takes a while.
  PST_RETURN_IF_ERROR(FindModel(name, input, num_classes).status());
  const std::vector<std::string> devices = SplitCommas(device);
  for (const std::string& one : devices) {
    if (one.empty()) {
      return InvalidArgument("empty device in '" + device +
                             "': expected 'cpu', 'gpu:N' or a comma-separated "
                             "list of them");
    }
  }
  std::vector<std::unique_ptr<Kernels>> kernels;
  for (const std::string& one : devices) {
    PST_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> k, MakeKernels(one, options));
    kernels.push_back(std::move(k));
  }
  return MakeModelOnKernels(name, input, num_classes, std::move(kernels));
}

}  // namespace pst
