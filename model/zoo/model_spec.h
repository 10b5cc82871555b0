// --model_spec: a model of the user's own, a layer stack in a small text
// format, one layer a line ('#' starts a comment):
//
//   conv 5x5 32 [stride 2] [same|valid] [relu|sigmoid]   (default valid)
//   maxpool 2                                            (2x2, stride 2)
//   dense 256 [relu|sigmoid]
//   batchnorm [momentum 0.99] [relu|sigmoid]             (per channel or feature)
//   dropout 0.5
//   dense classes                                        (the last layer)
//   learning_rate 0.05                                   (optional)
//
// and, optionally, how to train it (each line at most once; the chief's and
// the worker's flags of the same meaning win when given, and these apply
// when those flags are left at their defaults):
//
//   lr_schedule cosine [decay_steps 5000] [decay_rate 0.1] [warmup_steps 200] [min 0.001]
//                         (constant|step|exponential|cosine|plateau: --lr_schedule,
//                         --lr_decay_steps, --lr_decay_rate, --lr_warmup_steps,
//                         --lr_min, each on its own; plateau's patience, min_delta
//                         and cooldown are the chief's --lr_plateau_* flags)
//   weight_decay 0.0005   (--weight_decay)
//   augment crop,flip     (the worker's --augment, same syntax)
//
// Convolutions and pools need an image input (HxWxC) and come before every
// dense layer; dense layers flatten what they get (NHWC order). Variables
// are named conv0/..., dense0/..., batchnorm0/..., in order. A batchnorm
// normalizes what the layer before it gives (per channel of an image, per
// feature after a dense layer; BatchNorm in model/layers/batch_norm.h), then
// applies its activation. A spec without learning_rate
// needs --learning_rate.
#ifndef PST_MODEL_ZOO_MODEL_SPEC_H_
#define PST_MODEL_ZOO_MODEL_SPEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

struct LayerSpec {
  enum class Kind { kConv, kMaxPool, kDense, kDropout, kBatchNorm };
  enum class Activation { kNone, kRelu, kSigmoid };
  Kind kind = Kind::kDense;
  int64_t filter_height = 0, filter_width = 0, stride = 1;  // conv
  bool same_padding = false;                                // conv
  int64_t units = 0;  // conv: filters; dense: outputs (0: the class count)
  double rate = 0;    // dropout: the rate; batchnorm: the momentum
  Activation activation = Activation::kNone;
  int line = 0;  // in the spec's text, for errors
};

// How a spec says to train its model; each unset unless its line is given.
// Values are checked one by one here (a schedule's name, decay_steps > 0,
// decay_rate > 0, warmup_steps >= 0, min >= 0, weight_decay >= 0; the
// augment list is one word, checked by the worker), together by the chief.
struct SpecTraining {
  std::optional<std::string> lr_schedule;  // constant, step, exponential, cosine, plateau
  std::optional<int64_t> lr_decay_steps;
  std::optional<double> lr_decay_rate;
  std::optional<int64_t> lr_warmup_steps;
  std::optional<double> lr_min;
  std::optional<double> weight_decay;
  std::optional<std::string> augment;  // as --augment: crop,flip
};

struct ModelSpec {
  std::vector<LayerSpec> layers;
  std::optional<float> learning_rate;
  SpecTraining training;
};

// InvalidArgument naming `source`, the line and what is wrong.
StatusOr<ModelSpec> ParseModelSpec(const std::string& text, const std::string& source);

// The layers for `input` and `num_classes`; InvalidArgument when they do
// not fit (a convolution on features, an image pooled away), naming the line.
StatusOr<std::vector<std::unique_ptr<Layer>>> SpecLayers(const ModelSpec& spec,
                                                         const InputShape& input,
                                                         int64_t num_classes, Kernels& kernels);

}  // namespace pst

#endif  // PST_MODEL_ZOO_MODEL_SPEC_H_
