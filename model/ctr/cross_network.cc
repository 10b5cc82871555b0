#include "model/ctr/cross_network.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {

CrossNetwork::CrossNetwork(int64_t width, int layers, int64_t rank, Kernels& kernels)
    : width_(width), rank_(rank) {
  CHECK_GT(width, 0);
  CHECK_GT(layers, 0);
  CHECK_GE(rank, 0);
  for (int l = 0; l < layers; ++l) {
    const std::string name = "cross" + std::to_string(l);
    Linear linear;
    linear.first_variable = variables_.size();
    if (rank == 0) {
      linear.denses.push_back(std::make_unique<Dense>(name, width, width, kernels));
    } else {
      linear.denses.push_back(std::make_unique<Dense>(name + "/v", width, rank, kernels));
      linear.denses.push_back(std::make_unique<Dense>(name + "/u", rank, width, kernels));
    }
    for (const auto& dense : linear.denses) {
      for (VariableSpec& spec : dense->Variables()) variables_.push_back(std::move(spec));
    }
    linears_.push_back(std::move(linear));
  }
  x_.resize(layers);
  u_.resize(layers);
  inner_.resize(layers);
}

std::vector<std::string> CrossNetwork::Describe() const {
  std::vector<std::string> lines;
  for (const Linear& linear : linears_) {
    std::string line;
    for (const auto& dense : linear.denses)
      line += (line.empty() ? "" : " then ") + dense->Describe();
    lines.push_back(line + ", cross with x0");
  }
  return lines;
}

void CrossNetwork::Forward(const float* const* params, const float* x0, int64_t batch) {
  const int64_t n = batch * width_;
  const float* x = x0;
  for (size_t l = 0; l < linears_.size(); ++l) {
    const Linear& linear = linears_[l];
    const float* const* p = params + linear.first_variable;
    u_[l].resize(n);
    if (linear.denses.size() == 1) {
      linear.denses[0]->Forward(p, x, u_[l].data(), batch, true);
    } else {
      inner_[l].resize(batch * linear.denses[0]->out_dim());
      linear.denses[0]->Forward(p, x, inner_[l].data(), batch, true);
      linear.denses[1]->Forward(p + 2, inner_[l].data(), u_[l].data(), batch, true);
    }
    x_[l].resize(n);
    for (int64_t i = 0; i < n; ++i) x_[l][i] = x0[i] * u_[l][i] + x[i];
    x = x_[l].data();
  }
}

void CrossNetwork::Backward(const float* const* params, const float* x0, const float* dy,
                            float* const* grads, float* dx0, int64_t batch) {
  const int64_t n = batch * width_;
  std::fill(dx0, dx0 + n, 0.0f);
  dx_.assign(dy, dy + n);  // d loss / d x_{l+1}
  du_.resize(n);
  dlinear_in_.resize(n);
  for (size_t l = linears_.size(); l-- > 0;) {
    const Linear& linear = linears_[l];
    const float* const* p = params + linear.first_variable;
    float* const* g = grads + linear.first_variable;
    const float* x = l == 0 ? x0 : x_[l - 1].data();
    for (int64_t i = 0; i < n; ++i) {
      du_[i] = dx_[i] * x0[i];
      dx0[i] += dx_[i] * u_[l][i];
    }
    if (linear.denses.size() == 1) {
      linear.denses[0]->Backward(p, x, u_[l].data(), du_.data(), g, dlinear_in_.data(), batch);
    } else {
      dinner_.resize(batch * linear.denses[0]->out_dim());
      linear.denses[1]->Backward(p + 2, inner_[l].data(), u_[l].data(), du_.data(), g + 2,
                                 dinner_.data(), batch);
      linear.denses[0]->Backward(p, x, inner_[l].data(), dinner_.data(), g, dlinear_in_.data(),
                                 batch);
    }
    // x_l reaches x_{l+1} directly and through the linear map.
    for (int64_t i = 0; i < n; ++i) dx_[i] += dlinear_in_[i];
  }
  // x_0 is also the first layer's x_l: its share is what is left in dx_.
  for (int64_t i = 0; i < n; ++i) dx0[i] += dx_[i];
}

}  // namespace pst
