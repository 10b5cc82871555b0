// CrossNetwork: DCN-v2's cross layers (Wang et al., WWW 2021), on x0 of
// width d:
//
//   x_{l+1} = x0 * (W_l x_l + b_l) + x_l     (* element-wise)
//
// W_l full (d x d: variables "cross<l>/weights" [d, d] and "cross<l>/bias"
// [d]) or, with rank r > 0, low-rank U_l V_l^T ("cross<l>/v/..." d -> r,
// then "cross<l>/u/..." r -> d; the inner bias is redundant with b_l but
// harmless). Output x_L, width d. Not thread-safe; `kernels` (a host back
// end) is borrowed and must outlive it.
#ifndef PST_MODEL_CTR_CROSS_NETWORK_H_
#define PST_MODEL_CTR_CROSS_NETWORK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/variable_spec.h"
#include "kernels/kernels.h"
#include "model/layers/dense.h"

namespace pst {

class CrossNetwork {
 public:
  // width, layers > 0 and rank >= 0 (CHECKed).
  CrossNetwork(int64_t width, int layers, int64_t rank, Kernels& kernels);

  int64_t width() const { return width_; }
  int layers() const { return static_cast<int>(linears_.size()); }
  int64_t rank() const { return rank_; }
  const std::vector<VariableSpec>& variables() const { return variables_; }
  std::vector<std::string> Describe() const;

  // x0 is (batch, width); the result is output() until the next Forward.
  void Forward(const float* const* params, const float* x0, int64_t batch);
  const float* output() const { return x_.back().data(); }

  // After Forward on the same params and x0: dy (batch, width); writes
  // grads (overwritten) and dx0 (batch, width; overwritten).
  void Backward(const float* const* params, const float* x0, const float* dy, float* const* grads,
                float* dx0, int64_t batch);

 private:
  // Layer l's linear map: one Dense (full) or two (low rank).
  struct Linear {
    std::vector<std::unique_ptr<Dense>> denses;
    size_t first_variable = 0;
  };

  const int64_t width_;
  const int64_t rank_;
  std::vector<Linear> linears_;
  std::vector<VariableSpec> variables_;
  std::vector<std::vector<float>> x_;      // x_1 .. x_L
  std::vector<std::vector<float>> u_;      // W_l x_l + b_l
  std::vector<std::vector<float>> inner_;  // low rank: V_l^T x_l + c_l
  std::vector<float> dx_, du_, dinner_, dlinear_in_;
};

}  // namespace pst

#endif  // PST_MODEL_CTR_CROSS_NETWORK_H_
