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
  kOnes = 2,           // float32 only
};

struct VariableSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  Initializer initializer = Initializer::kZeros;
  // A statistic the model keeps, not a trainable variable (batch norm's
  // moving mean and variance): what a worker pushes for it is a delta that
  // the ps adds as it is (averaged over a sync step's workers), outside the
  // optimizer, the schedule and weight decay, and left out of clipping.
  bool moving_average = false;
};

// An embedding table (a row-sparse variable [rows, dim] of float32): every
// ps holds the rows whose id mod the number of ps is its index; workers
// pull and push it by row, never whole.
struct EmbeddingTableSpec {
  std::string name;
  int64_t dim = 0;
  int64_t rows = 0;  // fixed: hash buckets (a key maps to key mod rows); 0: dynamic
};

// Keys [offset, offset + rows) of a fixed table's key space: where a
// click model's field keys lie (data/feature_columns.h lays them out).
struct KeyRange {
  int64_t offset = 0;
  int64_t rows = 0;
  bool operator==(const KeyRange& o) const { return offset == o.offset && rows == o.rows; }
};

// Row ids of each of a model's tables, one list per table in their order.
using TableRowIds = std::vector<std::vector<int64_t>>;

}  // namespace pst

#endif  // PST_COMMON_VARIABLE_SPEC_H_
