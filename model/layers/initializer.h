// Initial values of variables, reproducible in any process: the value of a
// variable depends only on (seed, spec.name) and the spec, never on which
// other variables exist or in what order they are initialized.
#ifndef PST_MODEL_LAYERS_INITIALIZER_H_
#define PST_MODEL_LAYERS_INITIALIZER_H_

#include <cstdint>

#include "common/tensor.h"
#include "common/variable_spec.h"

namespace pst {

// A new tensor of spec.dtype and spec.shape filled by spec.initializer:
// kZeros for any dtype; kOnes (float32 only, CHECKed); kGlorotUniform
// (float32 only, CHECKed) draws from
// U(-a, a), a = sqrt(6 / (fan_in + fan_out)), with fan_in = shape[0] and
// fan_out = shape[1] for a matrix, and fan_in = R*S*C and fan_out = R*S*K for
// a convolution filter (R,S,C,K) (the Keras/TensorFlow rule for any rank).
// The random stream is std::mt19937_64 seeded with FNV-1a 64 of (seed,
// name), so the values are the same on every platform and build.
Tensor InitializeVariable(const VariableSpec& spec, uint64_t seed);

}  // namespace pst

#endif  // PST_MODEL_LAYERS_INITIALIZER_H_
