// Dropout: in training, zeroes each element with probability `rate` and
// scales the survivors by 1 / (1 - rate) (inverted dropout, so inference
// needs no rescaling); in inference, y = x. No variables; in_dim == out_dim.
//
// The masks are drawn by the back end (Kernels::DropoutMask), each from a
// seed that a host generator, seeded at construction, gives per step: the
// same seed gives the same sequence of masks on every back end, and nothing
// is copied from the host. Keeps the mask of its latest training Forward for
// Backward, in a buffer of its Kernels' memory.
#ifndef PST_MODEL_LAYERS_DROPOUT_H_
#define PST_MODEL_LAYERS_DROPOUT_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

class Dropout : public Layer {
 public:
  // dim positive and rate in [0, 1) (CHECKed). `kernels` is borrowed and
  // must outlive the layer.
  Dropout(int64_t dim, double rate, uint64_t seed, Kernels& kernels);

  int64_t in_dim() const override { return dim_; }
  int64_t out_dim() const override { return dim_; }
  std::string Describe() const override;  // "dropout (rate 0.5, 100)"
  std::vector<VariableSpec> Variables() const override { return {}; }
  InferenceOp Inference() const override;

  Status Reserve(int64_t batch) override;
  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

 private:
  const int64_t dim_;
  const double rate_;
  Kernels& kernels_;
  std::mt19937_64 rng_;
  // (B, dim): 0 for a dropped element, 1 / (1 - rate) for a kept one, for
  // the `mask_batch_` examples of the latest training Forward.
  std::unique_ptr<DeviceBuffer> mask_;
  int64_t mask_batch_ = 0;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_DROPOUT_H_
