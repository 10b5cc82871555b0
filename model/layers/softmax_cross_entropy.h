// SoftmaxCrossEntropy: the loss at the top of a classifier, computed from
// logits and integer labels (the softmax is fused into the loss for
// stability). `kernels` is borrowed and must outlive it. Not thread-safe.
#ifndef PST_MODEL_LAYERS_SOFTMAX_CROSS_ENTROPY_H_
#define PST_MODEL_LAYERS_SOFTMAX_CROSS_ENTROPY_H_

#include <cstdint>

#include "kernels/kernels.h"

namespace pst {

class SoftmaxCrossEntropy {
 public:
  SoftmaxCrossEntropy(int64_t num_classes, Kernels& kernels);

  int64_t num_classes() const { return num_classes_; }

  // logits is (B,C), labels is (B) with values in [0,C) (the caller checks),
  // dlogits is (B,C) or null. Returns the mean loss over the batch and, unless
  // dlogits is null, writes its gradient w.r.t. the logits.
  float Loss(const float* logits, const int32_t* labels, float* dlogits, int64_t batch);

  // logits is (B,C), labels is (B): rows whose argmax is the label.
  int64_t CountCorrect(const float* logits, const int32_t* labels, int64_t batch);

 private:
  const int64_t num_classes_;
  Kernels& kernels_;
};

}  // namespace pst

#endif  // PST_MODEL_LAYERS_SOFTMAX_CROSS_ENTROPY_H_
