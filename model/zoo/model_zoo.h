// The models a run can name with --model.
#ifndef PST_MODEL_ZOO_MODEL_ZOO_H_
#define PST_MODEL_ZOO_MODEL_ZOO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "kernels/kernels.h"
#include "model/layers/layer.h"
#include "model/model.h"
#include "model/zoo/model_spec.h"

namespace pst {

// "mlp"      input-100-classes, sigmoid hidden layer (the classic seed model)
// "mlp_relu" input-256-128-classes, ReLU
// "wide_mlp" input-2048-2048-classes, ReLU (~5.8M parameters at 784/10;
//            for parameter-server benchmarks)
// "cnn"      LeNet for HxWxC images (read NHWC; D = S*S features as an SxSx1
//            image, 784: MNIST's 28x28x1): conv 5x5x20,
//            ReLU, max-pool 2x2, conv 5x5x50, ReLU, max-pool 2x2, dense 500,
//            ReLU, dense classes; variables conv0/*, conv1/*, dense0/*,
//            dense1/* (~431K parameters at 28x28x1 and 10 classes). A stage
//            on a side below 12 pads by 2, so small images work too.
// The mlps take any input, flattened.
std::vector<std::string> ModelNames();

// A model of the user's own (model/zoo/model_spec.h) is named by its spec's
// text: SpecModelName(text) works wherever a zoo name does.
std::string SpecModelName(const std::string& spec_text);
bool IsSpecModel(const std::string& name);

// The plain-SGD learning rate a model trains well with at batch 100 (what
// --learning_rate=0 means). InvalidArgument for an unknown model.
StatusOr<float> RecommendedLearningRate(const std::string& name);

// How model `name`'s spec says to train it (lr_schedule, weight_decay and
// augment lines; model/zoo/model_spec.h), for the flags left at their defaults:
// every field empty for a zoo model and for a click model's spec.
// InvalidArgument for a spec that does not parse.
StatusOr<SpecTraining> SpecTrainingSettings(const std::string& name);

// OK when model `name` takes `input` and `num_classes`; else InvalidArgument
// naming both sides (MakeModel checks the same, and builds the model).
Status CheckModelTakes(const std::string& name, const InputShape& input, int64_t num_classes);

// A new model running on `device`: "cpu" or "gpu:N" (see MakeKernels), or
// a comma-separated list of those ("gpu:0,gpu:1", repeats allowed) for a
// TowerModel with one tower per entry, each on its own Kernels.
// `options` go to every MakeKernels call.
// Errors: InvalidArgument for an unknown name (the message lists the known
// ones), an empty input or fewer than 2 classes, an input the model cannot
// take (naming model and input) or an empty device in the list; the
// devices' errors from MakeKernels.
StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name, const InputShape& input = 784,
                                           int64_t num_classes = 10,
                                           const std::string& device = "cpu",
                                           const KernelsOptions& options = {});

// As MakeModel, on back ends the caller made (a test's fake device, say):
// one tower per element of `kernels` (at least one; a single one gives a
// plain SequentialModel), which the model takes over.
StatusOr<std::unique_ptr<Model>> MakeModelOnKernels(const std::string& name,
                                                    const InputShape& input, int64_t num_classes,
                                                    std::vector<std::unique_ptr<Kernels>> kernels);

// The layer stack of model `name` for `input` and `num_classes`, on
// `kernels` (borrowed; allocates nothing until Reserve): what a model is
// made of, for exporters. Errors as for MakeModel's model checks.
StatusOr<std::vector<std::unique_ptr<Layer>>> MakeLayers(const std::string& name,
                                                         const InputShape& input,
                                                         int64_t num_classes, Kernels& kernels);

}  // namespace pst

#endif  // PST_MODEL_ZOO_MODEL_ZOO_H_
