#include "model/model_zoo.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "model/activations.h"
#include "model/conv2d.h"
#include "model/dense.h"
#include "model/max_pool.h"
#include "model/replicated_model.h"
#include "model/sequential_model.h"

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
LayerStack MlpLayers(const MlpSpec& spec, int64_t input_dim,
                     int64_t num_classes, Kernels& kernels) {
  std::vector<int64_t> widths = {input_dim};
  widths.insert(widths.end(), spec.hidden.begin(), spec.hidden.end());
  widths.push_back(num_classes);

  LayerStack layers;
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

constexpr int64_t kMnistSide = 28;

// LeNet on 28x28x1 images: two stages of 5x5 convolution (valid, stride 1),
// ReLU and 2x2 max-pool (28 -> 24 -> 12 with 20 filters, 12 -> 8 -> 4 with
// 50), then dense 800 -> 500, ReLU, dense 500 -> num_classes.
LayerStack CnnLayers(int64_t num_classes, Kernels& kernels) {
  struct Stage {
    const char* name;
    int64_t filters;
  };
  LayerStack layers;
  int64_t side = kMnistSide, channels = 1;
  for (const Stage& stage : {Stage{"conv0", 20}, Stage{"conv1", 50}}) {
    Conv2DShape shape;
    shape.height = shape.width = side;
    shape.in_channels = channels;
    shape.filter_height = shape.filter_width = 5;
    shape.out_channels = stage.filters;
    const int64_t conv_side = shape.out_height();
    layers.push_back(std::make_unique<Conv2D>(stage.name, shape, kernels));
    layers.push_back(
        std::make_unique<Relu>(conv_side * conv_side * stage.filters, kernels));
    layers.push_back(std::make_unique<MaxPool2x2>(conv_side, conv_side,
                                                  stage.filters, kernels));
    side = conv_side / 2;
    channels = stage.filters;
  }
  // The pooled (4,4,50) images, flattened in NHWC order.
  const int64_t features = side * side * channels;
  layers.push_back(std::make_unique<Dense>("dense0", features, 500, kernels));
  layers.push_back(std::make_unique<Relu>(500, kernels));
  layers.push_back(
      std::make_unique<Dense>("dense1", 500, num_classes, kernels));
  return layers;
}

// A model of the zoo: its name, the input_dim it requires (0: any), and its
// layers for (input_dim, num_classes).
struct ZooModel {
  std::string name;
  int64_t required_input_dim;
  float learning_rate;  // plain SGD, batch 100: measured on MNIST
  std::function<LayerStack(int64_t input_dim, int64_t num_classes,
                           Kernels& kernels)>
      layers;
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
    zoo.push_back(
        {spec.name, 0, spec.learning_rate,
         [spec](int64_t input_dim, int64_t num_classes, Kernels& kernels) {
           return MlpLayers(spec, input_dim, num_classes, kernels);
         }});
  }
  zoo.push_back(
      // 0.3 diverges (a dead network); 0.1 reaches 0.988 in 2000 async steps.
      {"cnn", kMnistSide * kMnistSide, 0.1f,
       [](int64_t /*input_dim*/, int64_t num_classes, Kernels& kernels) {
         return CnnLayers(num_classes, kernels);
       }});
  return zoo;
}

// The entry of `zoo` for `name`, if the dimensions suit it.
StatusOr<const ZooModel*> FindModel(const std::vector<ZooModel>& zoo,
                                    const std::string& name, int64_t input_dim,
                                    int64_t num_classes) {
  const ZooModel* model = nullptr;
  for (const ZooModel& m : zoo) {
    if (name == m.name) model = &m;
  }
  if (model == nullptr) return UnknownModel(name);
  if (input_dim <= 0 || num_classes < 2) {
    return InvalidArgument("model '" + name + "' needs input_dim > 0 and " +
                           "num_classes >= 2, got " +
                           std::to_string(input_dim) + " and " +
                           std::to_string(num_classes));
  }
  if (model->required_input_dim != 0 &&
      input_dim != model->required_input_dim) {
    return InvalidArgument("model '" + name + "' takes input_dim " +
                           std::to_string(model->required_input_dim) +
                           ", got " + std::to_string(input_dim));
  }
  return model;
}

// "gpu:0,gpu:1" -> {"gpu:0", "gpu:1"}; empty entries are kept.
std::vector<std::string> SplitDevices(const std::string& devices) {
  std::vector<std::string> list;
  size_t begin = 0;
  for (;;) {
    const size_t comma = devices.find(',', begin);
    list.push_back(devices.substr(begin, comma - begin));
    if (comma == std::string::npos) return list;
    begin = comma + 1;
  }
}

}  // namespace

StatusOr<float> RecommendedLearningRate(const std::string& name) {
  for (const ZooModel& model : Zoo()) {
    if (model.name == name) return model.learning_rate;
  }
  return UnknownModel(name);
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const ZooModel& model : Zoo()) names.push_back(model.name);
  return names;
}

StatusOr<std::unique_ptr<Model>> MakeModelOnKernels(
    const std::string& name, int64_t input_dim, int64_t num_classes,
    std::vector<std::unique_ptr<Kernels>> kernels) {
  const std::vector<ZooModel> zoo = Zoo();
  PST_ASSIGN_OR_RETURN(const ZooModel* model,
                       FindModel(zoo, name, input_dim, num_classes));
  if (kernels.empty()) return InvalidArgument("no device to run on");
  std::vector<std::unique_ptr<Model>> replicas;
  for (std::unique_ptr<Kernels>& k : kernels) {
    LayerStack layers = model->layers(input_dim, num_classes, *k);
    replicas.push_back(
        std::make_unique<SequentialModel>(std::move(k), std::move(layers)));
  }
  if (replicas.size() == 1) return std::move(replicas.front());
  return std::unique_ptr<Model>(new ReplicatedModel(std::move(replicas)));
}

StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name,
                                           int64_t input_dim,
                                           int64_t num_classes,
                                           const std::string& device,
                                           const KernelsOptions& options) {
  // Checked before any device is touched: starting a GPU takes a while.
  const std::vector<ZooModel> zoo = Zoo();
  PST_RETURN_IF_ERROR(FindModel(zoo, name, input_dim, num_classes).status());
  const std::vector<std::string> devices = SplitDevices(device);
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
  return MakeModelOnKernels(name, input_dim, num_classes, std::move(kernels));
}

}  // namespace pst
