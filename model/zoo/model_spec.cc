#include "model/zoo/model_spec.h"

#include <cmath>
#include <sstream>

#include "common/parse_number.h"
#include "model/layers/activations.h"
#include "model/layers/batch_norm.h"
#include "model/layers/conv2d.h"
#include "model/layers/dense.h"
#include "model/layers/dropout.h"
#include "model/layers/max_pool.h"

namespace pst {
namespace {

// "5x5" -> 5, 5.
bool ParseWindow(const std::string& word, int64_t* height, int64_t* width) {
  const size_t x = word.find('x');
  return x != std::string::npos && ParseNumber(word.substr(0, x), height) &&
         ParseNumber(word.substr(x + 1), width) && *height > 0 && *width > 0;
}

// The options after a layer's sizes: activation, padding, stride.
Status ParseOptions(const std::vector<std::string>& words, size_t first, bool conv,
                    LayerSpec* layer) {
  for (size_t i = first; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "relu") {
      layer->activation = LayerSpec::Activation::kRelu;
    } else if (w == "sigmoid") {
      layer->activation = LayerSpec::Activation::kSigmoid;
    } else if (conv && (w == "same" || w == "valid")) {
      layer->same_padding = w == "same";
    } else if (conv && w == "stride" && i + 1 < words.size() &&
               ParseNumber(words[i + 1], &layer->stride) && layer->stride > 0) {
      ++i;
    } else {
      return InvalidArgument("unexpected '" + w + "'");
    }
  }
  return Status::OK();
}

// "lr_schedule NAME [decay_steps N] [decay_rate R] [warmup_steps W] [min M]".
Status ParseLrSchedule(const std::vector<std::string>& w, SpecTraining* t) {
  static constexpr char kUsage[] =
      "expected 'lr_schedule constant|step|exponential|cosine|plateau [decay_steps N] "
      "[decay_rate R] [warmup_steps W] [min M]'";
  if (t->lr_schedule) return InvalidArgument("a second 'lr_schedule' line");
  if (w.size() < 2) return InvalidArgument(kUsage);
  const std::string& name = w[1];
  if (name != "constant" && name != "step" && name != "exponential" && name != "cosine" &&
      name != "plateau") {
    return InvalidArgument(std::string(kUsage) + ", got '" + name + "'");
  }
  for (size_t i = 2; i < w.size(); i += 2) {
    const std::string& key = w[i];
    const std::string value = i + 1 < w.size() ? w[i + 1] : "";
    int64_t steps = 0;
    double number = 0;
    const bool is_steps = ParseNumber(value, &steps);
    const bool is_number = ParseNumber(value, &number) && std::isfinite(number);
    if (key == "decay_steps" && !t->lr_decay_steps) {
      if (!is_steps || steps <= 0) return InvalidArgument("expected 'decay_steps N' with N > 0");
      t->lr_decay_steps = steps;
    } else if (key == "decay_rate" && !t->lr_decay_rate) {
      if (!is_number || !(number > 0)) {
        return InvalidArgument("expected 'decay_rate R' with R > 0");
      }
      t->lr_decay_rate = number;
    } else if (key == "warmup_steps" && !t->lr_warmup_steps) {
      if (!is_steps || steps < 0) return InvalidArgument("expected 'warmup_steps W' with W >= 0");
      t->lr_warmup_steps = steps;
    } else if (key == "min" && !t->lr_min) {
      if (!is_number || !(number >= 0)) return InvalidArgument("expected 'min M' with M >= 0");
      t->lr_min = number;
    } else {
      return InvalidArgument("unexpected '" + key + "' (repeated or unknown); " + kUsage);
    }
  }
  t->lr_schedule = name;
  return Status::OK();
}

// The lines that say how to train (SpecTraining); false when `w` is none.
bool ParseTrainingLine(const std::vector<std::string>& w, SpecTraining* t, Status* status) {
  const std::string& kind = w[0];
  if (kind == "lr_schedule") {
    *status = ParseLrSchedule(w, t);
  } else if (kind == "weight_decay") {
    double decay = 0;
    if (t->weight_decay) {
      *status = InvalidArgument("a second 'weight_decay' line");
    } else if (w.size() != 2 || !ParseNumber(w[1], &decay) || !std::isfinite(decay) ||
               !(decay >= 0)) {
      *status = InvalidArgument("expected 'weight_decay W' with W >= 0");
    } else {
      t->weight_decay = decay;
    }
  } else if (kind == "augment") {
    if (t->augment) {
      *status = InvalidArgument("a second 'augment' line");
    } else if (w.size() != 2) {
      *status = InvalidArgument(
          "expected 'augment LIST', LIST as --augment's: crop, crop:PAD and flip, "
          "comma-separated without spaces");
    } else {
      t->augment = w[1];
    }
  } else {
    return false;
  }
  return true;
}

Status ParseLine(const std::vector<std::string>& w, ModelSpec* spec) {
  LayerSpec layer;
  const std::string& kind = w[0];
  if (Status s; ParseTrainingLine(w, &spec->training, &s)) return s;
  if (kind == "learning_rate") {
    float rate = 0;
    if (w.size() != 2 || !ParseNumber(w[1], &rate) || !(rate > 0)) {
      return InvalidArgument("expected 'learning_rate R' with R > 0");
    }
    spec->learning_rate = rate;
    return Status::OK();
  }
  if (kind == "conv") {
    layer.kind = LayerSpec::Kind::kConv;
    if (w.size() < 3 || !ParseWindow(w[1], &layer.filter_height, &layer.filter_width) ||
        !ParseNumber(w[2], &layer.units) || layer.units < 1) {
      return InvalidArgument("expected 'conv RxS FILTERS [stride N] [same|valid] [relu|sigmoid]'");
    }
    PST_RETURN_IF_ERROR(ParseOptions(w, 3, /*conv=*/true, &layer));
  } else if (kind == "maxpool") {
    layer.kind = LayerSpec::Kind::kMaxPool;
    if (w.size() != 2 || w[1] != "2") return InvalidArgument("expected 'maxpool 2' (2x2 only)");
  } else if (kind == "dense") {
    layer.kind = LayerSpec::Kind::kDense;
    if (w.size() < 2 ||
        (w[1] != "classes" && (!ParseNumber(w[1], &layer.units) || layer.units < 1))) {
      return InvalidArgument("expected 'dense UNITS|classes [relu|sigmoid]'");
    }
    PST_RETURN_IF_ERROR(ParseOptions(w, 2, /*conv=*/false, &layer));
  } else if (kind == "batchnorm") {
    layer.kind = LayerSpec::Kind::kBatchNorm;
    layer.rate = BatchNormOptions().momentum;
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i] == "momentum" && i + 1 < w.size() && ParseNumber(w[i + 1], &layer.rate) &&
          layer.rate >= 0 && layer.rate < 1) {
        ++i;
      } else if (w[i] == "relu" || w[i] == "sigmoid") {
        PST_RETURN_IF_ERROR(ParseOptions(w, i, /*conv=*/false, &layer));
        break;
      } else {
        return InvalidArgument(
            "expected 'batchnorm [momentum M] [relu|sigmoid]' with M in [0, 1), got '" + w[i] +
            "'");
      }
    }
  } else if (kind == "dropout") {
    layer.kind = LayerSpec::Kind::kDropout;
    if (w.size() != 2 || !ParseNumber(w[1], &layer.rate) || layer.rate < 0 || layer.rate >= 1) {
      return InvalidArgument("expected 'dropout RATE' with RATE in [0, 1)");
    }
  } else {
    return InvalidArgument("unknown layer '" + kind +
                           "' (conv, maxpool, dense, batchnorm, dropout; learning_rate, "
                           "lr_schedule, weight_decay, augment)");
  }
  spec->layers.push_back(layer);
  return Status::OK();
}

void AddActivation(LayerSpec::Activation a, int64_t dim, Kernels& kernels,
                   std::vector<std::unique_ptr<Layer>>* layers) {
  if (a == LayerSpec::Activation::kRelu) layers->push_back(std::make_unique<Relu>(dim, kernels));
  if (a == LayerSpec::Activation::kSigmoid) {
    layers->push_back(std::make_unique<Sigmoid>(dim, kernels));
  }
}

}  // namespace

StatusOr<ModelSpec> ParseModelSpec(const std::string& text, const std::string& source) {
  ModelSpec spec;
  std::istringstream in(text);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    std::istringstream words_in(line);
    std::vector<std::string> words;
    for (std::string w; words_in >> w;) words.push_back(w);
    if (words.empty()) continue;
    const size_t before = spec.layers.size();
    if (Status s = ParseLine(words, &spec); !s.ok()) {
      return InvalidArgument(source + ":" + std::to_string(line_number) + ": " + s.message());
    }
    if (spec.layers.size() > before) spec.layers.back().line = line_number;
  }
  if (spec.layers.empty() || spec.layers.back().kind != LayerSpec::Kind::kDense ||
      spec.layers.back().units != 0 ||
      spec.layers.back().activation != LayerSpec::Activation::kNone) {
    return InvalidArgument(source +
                           ": the last layer must be 'dense classes' (no activation: the loss "
                           "takes the logits)");
  }
  return spec;
}

StatusOr<std::vector<std::unique_ptr<Layer>>> SpecLayers(const ModelSpec& spec,
                                                         const InputShape& input,
                                                         int64_t num_classes, Kernels& kernels) {
  std::vector<std::unique_ptr<Layer>> layers;
  int64_t height = input.height(), width = input.width(), channels = input.channels();
  bool flat = !input.is_image();
  int convs = 0, denses = 0, dropouts = 0, norms = 0;
  for (const LayerSpec& l : spec.layers) {
    const std::string at = "line " + std::to_string(l.line) + ": ";
    switch (l.kind) {
      case LayerSpec::Kind::kConv: {
        if (flat) {
          return InvalidArgument(
              at + "a convolution needs an image, got " +
              (denses ? std::string("a dense layer's output") : input.ToString()));
        }
        Conv2DShape s;
        s.height = height;
        s.width = width;
        s.in_channels = channels;
        s.filter_height = l.filter_height;
        s.filter_width = l.filter_width;
        s.out_channels = l.units;
        s.stride = l.stride;
        s.padding = l.same_padding ? (l.filter_height - 1) / 2 : 0;
        if (l.same_padding && l.filter_height != l.filter_width) {
          return InvalidArgument(at + "'same' needs a square filter");
        }
        if (s.out_height() < 1 || s.out_width() < 1) {
          return InvalidArgument(at + "a " + std::to_string(l.filter_height) + "x" +
                                 std::to_string(l.filter_width) + " filter does not fit a " +
                                 std::to_string(height) + "x" + std::to_string(width) + " image");
        }
        layers.push_back(std::make_unique<Conv2D>("conv" + std::to_string(convs++), s, kernels));
        height = s.out_height();
        width = s.out_width();
        channels = l.units;
        AddActivation(l.activation, height * width * channels, kernels, &layers);
        break;
      }
      case LayerSpec::Kind::kMaxPool:
        if (flat || height < 2 || width < 2) {
          return InvalidArgument(at + "max-pooling needs an image of at least 2x2");
        }
        layers.push_back(std::make_unique<MaxPool2x2>(height, width, channels, kernels));
        height /= 2;
        width /= 2;
        break;
      case LayerSpec::Kind::kDense: {
        const int64_t in = height * width * channels;
        const int64_t out = l.units ? l.units : num_classes;
        layers.push_back(
            std::make_unique<Dense>("dense" + std::to_string(denses++), in, out, kernels));
        flat = true;
        height = width = 1;
        channels = out;
        AddActivation(l.activation, out, kernels, &layers);
        break;
      }
      case LayerSpec::Kind::kBatchNorm: {
        const InputShape shape =
            flat ? InputShape({channels}) : InputShape({height, width, channels});
        BatchNormOptions options;
        options.momentum = l.rate;
        layers.push_back(std::make_unique<BatchNorm>("batchnorm" + std::to_string(norms++), shape,
                                                     kernels, options));
        AddActivation(l.activation, shape.size(), kernels, &layers);
        break;
      }
      case LayerSpec::Kind::kDropout:
        layers.push_back(std::make_unique<Dropout>(height * width * channels, l.rate,
                                                   /*seed=*/1000 + dropouts++, kernels));
        break;
    }
  }
  return layers;
}

}  // namespace pst
