// Mlp: the click models' stacks of dense layers. Each hidden layer is a
// Dense, then (optionally) a BatchNorm, a ReLU, then (optionally) a Dropout;
// an optional output Dense follows, with no activation (a logit).
//
// Variables are "<prefix>dense<i>/weights|bias" (i counting every Dense,
// the output one last) and "<prefix>bn<i>/..." (BatchNorm's four), in layer
// order: with an empty prefix and neither batch norm nor dropout, the names
// wide_deep has always had. Not thread-safe; `kernels` (a host back end) is
// borrowed and must outlive it.
#ifndef PST_MODEL_CTR_MLP_H_
#define PST_MODEL_CTR_MLP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/variable_spec.h"
#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

struct MlpOptions {
  std::vector<int64_t> hidden;  // units of each hidden layer (ReLU)
  int64_t output = 0;           // units of the output layer; 0: none
  bool batchnorm = false;       // after each hidden Dense, before its ReLU
  double dropout = 0;           // after each hidden ReLU; in [0, 1)
};

class Mlp {
 public:
  // `in` > 0 and the options' sizes > 0 (CHECKed; the spec parsers check
  // them first). `seed` seeds the dropout masks.
  Mlp(const std::string& prefix, int64_t in, const MlpOptions& options, uint64_t seed,
      Kernels& kernels);

  int64_t in_dim() const { return in_; }
  int64_t out_dim() const { return out_; }
  const std::vector<VariableSpec>& variables() const { return variables_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // One line per layer, for placement logs.
  std::vector<std::string> Describe() const;

  // x is (batch, in_dim); params hold variables() in order. The result,
  // (batch, out_dim), is output() until the next Forward.
  void Forward(const float* const* params, const float* x, int64_t batch, bool training);
  const float* output() const { return activations_.back().data(); }

  // After a training Forward on the same params and x: dy is (batch,
  // out_dim); writes grads (one per variable, overwritten) and, unless
  // null, dx (batch, in_dim; overwritten).
  void Backward(const float* const* params, const float* x, const float* dy, float* const* grads,
                float* dx, int64_t batch);

 private:
  const int64_t in_;
  int64_t out_ = 0;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<VariableSpec> variables_;
  std::vector<size_t> first_variable_;  // layers_[i]'s variables start here
  std::vector<std::vector<float>> activations_;
  std::vector<std::vector<float>> activation_grads_;
};

}  // namespace pst

#endif  // PST_MODEL_CTR_MLP_H_
