#include "model/ctr/mlp.h"

#include <glog/logging.h>

#include "model/layers/activations.h"
#include "model/layers/batch_norm.h"
#include "model/layers/dense.h"
#include "model/layers/dropout.h"

namespace pst {

Mlp::Mlp(const std::string& prefix, int64_t in, const MlpOptions& options, uint64_t seed,
         Kernels& kernels)
    : in_(in) {
  CHECK_GT(in, 0);
  CHECK(options.dropout >= 0 && options.dropout < 1);
  int64_t width = in;
  int dense = 0;
  for (size_t i = 0; i < options.hidden.size(); ++i) {
    const int64_t units = options.hidden[i];
    layers_.push_back(
        std::make_unique<Dense>(prefix + "dense" + std::to_string(dense++), width, units, kernels));
    if (options.batchnorm) {
      layers_.push_back(std::make_unique<BatchNorm>(prefix + "bn" + std::to_string(i),
                                                    InputShape(units), kernels));
    }
    layers_.push_back(std::make_unique<Relu>(units, kernels));
    if (options.dropout > 0) {
      layers_.push_back(std::make_unique<Dropout>(units, options.dropout, seed + i, kernels));
    }
    width = units;
  }
  if (options.output > 0) {
    layers_.push_back(std::make_unique<Dense>(prefix + "dense" + std::to_string(dense), width,
                                              options.output, kernels));
    width = options.output;
  }
  CHECK(!layers_.empty()) << "an Mlp needs a layer";
  out_ = width;
  for (const std::unique_ptr<Layer>& layer : layers_) {
    first_variable_.push_back(variables_.size());
    for (VariableSpec& spec : layer->Variables()) variables_.push_back(std::move(spec));
  }
  activations_.resize(layers_.size());
  activation_grads_.resize(layers_.size());
}

std::vector<std::string> Mlp::Describe() const {
  std::vector<std::string> lines;
  for (const std::unique_ptr<Layer>& layer : layers_) lines.push_back(layer->Describe());
  return lines;
}

void Mlp::Forward(const float* const* params, const float* x, int64_t batch, bool training) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    CHECK(layers_[i]->Reserve(batch).ok());  // the CPU's allocations do not fail short of a crash
    activations_[i].resize(batch * layers_[i]->out_dim());
    layers_[i]->Forward(params + first_variable_[i], x, activations_[i].data(), batch, training);
    x = activations_[i].data();
  }
}

void Mlp::Backward(const float* const* params, const float* x, const float* dy, float* const* grads,
                   float* dx, int64_t batch) {
  for (size_t i = layers_.size(); i-- > 0;) {
    const float* layer_x = i == 0 ? x : activations_[i - 1].data();
    float* layer_dx = nullptr;
    if (i > 0) {
      activation_grads_[i - 1].resize(batch * layers_[i]->in_dim());
      layer_dx = activation_grads_[i - 1].data();
    } else {
      layer_dx = dx;
    }
    const float* layer_dy = i + 1 == layers_.size() ? dy : activation_grads_[i].data();
    layers_[i]->Backward(params + first_variable_[i], layer_x, activations_[i].data(), layer_dy,
                         grads + first_variable_[i], layer_dx, batch);
  }
}

}  // namespace pst
