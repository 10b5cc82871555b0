// MaxPool2x2: the max of each 2x2 window, stride 2, on images stored NHWC
// one per row (an odd last row or column is dropped): in_dim is H*W*C,
// out_dim (H/2)*(W/2)*C. No variables. Keeps the argmax of its latest
// training Forward for Backward, in a buffer of its Kernels' memory.
#ifndef PST_MODEL_LAYERS_MAX_POOL_H_
#define PST_MODEL_LAYERS_MAX_POOL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/layers/layer.h"

namespace pst {

class MaxPool2x2 : public Layer {
 public:
  // height and width at least 2, channels positive (CHECKed). `kernels` is
  // borrowed and must outlive the layer.
  MaxPool2x2(int64_t height, int64_t width, int64_t channels, Kernels& kernels);

  int64_t in_dim() const override { return height_ * width_ * channels_; }
  int64_t out_dim() const override { return (height_ / 2) * (width_ / 2) * channels_; }
  // "max_pool (2x2, 24x24x20->12x12x20)"
  std::string Describe() const override;
  std::vector<VariableSpec> Variables() const override { return {}; }
  InferenceOp Inference() const override;

  Status Reserve(int64_t batch) override;
  void Forward(const float* const* params, const float* x, float* y, int64_t batch,
               bool training) override;
  void Backward(const float* const* params, const float* x, const float* y, const float* dy,
                float* const* grads, float* dx, int64_t batch) override;

 private:
  const int64_t height_, width_, channels_;
  Kernels& kernels_;
  // int32 (B, out_dim): the index into x of each output's max, for the
  // `argmax_batch_` examples of the latest training Forward.
  std::unique_ptr<DeviceBuffer> argmax_;
  int64_t argmax_batch_ = 0;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_MAX_POOL_H_
