#include "model/layers/softmax_cross_entropy.h"

#include <glog/logging.h>

namespace pst {

SoftmaxCrossEntropy::SoftmaxCrossEntropy(int64_t num_classes, Kernels& kernels)
    : num_classes_(num_classes), kernels_(kernels) {
  CHECK_GE(num_classes_, 2);
}

float SoftmaxCrossEntropy::Loss(const float* logits, const int32_t* labels, float* dlogits,
                                int64_t batch) {
  return kernels_.SoftmaxCrossEntropy(logits, labels, dlogits, batch, num_classes_);
}

int64_t SoftmaxCrossEntropy::CountCorrect(const float* logits, const int32_t* labels,
                                          int64_t batch) {
  return kernels_.ArgmaxCorrect(logits, labels, batch, num_classes_);
}

}  // namespace pst
