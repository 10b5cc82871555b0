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
// Convolutions and pools need an image input (HxWxC) and come before every
// dense layer; dense layers flatten what they get (NHWC order). Variables
// are named conv0/..., dense0/..., batchnorm0/..., in order. A batchnorm
// normalizes what the layer before it gives (per channel of an image, per
// feature after a dense layer; BatchNorm in model/batch_norm.h), then
// applies its activation. A spec without learning_rate
// needs --learning_rate.
#ifndef PST_MODEL_MODEL_SPEC_H_
#define PST_MODEL_MODEL_SPEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "kernels/kernels.h"
#include "model/layer.h"

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

struct ModelSpec {
  std::vector<LayerSpec> layers;
  std::optional<float> learning_rate;
};

// InvalidArgument naming `source`, the line and what is wrong.
StatusOr<ModelSpec> ParseModelSpec(const std::string& text, const std::string& source);

// The layers for `input` and `num_classes`; InvalidArgument when they do
// not fit (a convolution on features, an image pooled away), naming the line.
StatusOr<std::vector<std::unique_ptr<Layer>>> SpecLayers(const ModelSpec& spec,
                                                         const InputShape& input,
                                                         int64_t num_classes, Kernels& kernels);

}  // namespace pst

#endif  // PST_MODEL_MODEL_SPEC_H_
