// VariableSpec: what a model declares for each of its variables. The list,
// in creation order, is the input to placement and initialization.
#ifndef PST_COMMON_VARIABLE_SPEC_H_
#define PST_COMMON_VARIABLE_SPEC_H_

#include <string>
#include <vector>

#include "common/tensor.h"

namespace pst {

enum class Initializer : uint8_t {
  kZeros = 0,
  kGlorotUniform = 1,  // U(-a, a), a = sqrt(6 / (fan_in + fan_out))
};

struct VariableSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  Initializer initializer = Initializer::kZeros;
};

}  // namespace pst

#endif  // PST_COMMON_VARIABLE_SPEC_H_
