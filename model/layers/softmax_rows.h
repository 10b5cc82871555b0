// SoftmaxRows: a model's logits turned into class probabilities on the
// host, for Predict.
#ifndef PST_MODEL_LAYERS_SOFTMAX_ROWS_H_
#define PST_MODEL_LAYERS_SOFTMAX_ROWS_H_

#include <cstdint>

namespace pst {

// Each row of the (rows x cols) logits becomes its softmax, in place.
void SoftmaxRows(float* x, int64_t rows, int64_t cols);

}  // namespace pst

#endif  // PST_MODEL_LAYERS_SOFTMAX_ROWS_H_
