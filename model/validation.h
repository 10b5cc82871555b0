// The argument checks every Model implementation makes before a step, so
// that all of them reject the same inputs with the same InvalidArgument.
#ifndef PST_MODEL_VALIDATION_H_
#define PST_MODEL_VALIDATION_H_

#include <cstdint>
#include <vector>

#include "common/batch.h"
#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"

namespace pst {

// OK when `params` match `variables` one for one in dtype and shape, none
// empty.
Status ValidateParams(const std::vector<Tensor>& params,
                      const std::vector<VariableSpec>& variables);

// OK when `batch` is non-empty, holds size x input_dim features and size
// labels, each in [0, num_classes).
Status ValidateBatch(const Batch& batch, int64_t input_dim, int64_t num_classes);

// OK when `batch` holds size x input_dim features (labels are not read):
// what Predict takes.
Status ValidateFeatures(const Batch& batch, int64_t input_dim);

// Allocates one zero tensor per variable when *grads is empty; otherwise
// checks that they match `variables` as ValidateParams does.
Status PrepareGrads(const std::vector<VariableSpec>& variables, std::vector<Tensor>* grads);

}  // namespace pst

#endif  // PST_MODEL_VALIDATION_H_
