#include "data/example_range.h"

namespace pst {

void CopyExamples(const Dataset& data, int64_t begin, int64_t n, Batch* batch) {
  const int64_t d = data.feature_dim;
  batch->size = n;
  batch->feature_dim = d;
  batch->features.assign(data.features.begin() + begin * d,
                         data.features.begin() + (begin + n) * d);
  batch->labels.assign(data.labels.begin() + begin, data.labels.begin() + begin + n);
  batch->num_fields = data.num_fields;
  if (data.num_fields == 0) return;
  const int64_t first = data.sparse_offsets[begin], last = data.sparse_offsets[begin + n];
  batch->sparse_offsets.resize(n + 1);
  for (int64_t i = 0; i <= n; ++i)
    batch->sparse_offsets[i] = data.sparse_offsets[begin + i] - first;
  batch->sparse_keys.assign(data.sparse_keys.begin() + first, data.sparse_keys.begin() + last);
  batch->sparse_fields.assign(data.sparse_fields.begin() + first,
                              data.sparse_fields.begin() + last);
  batch->sparse_values.assign(data.sparse_values.begin() + first,
                              data.sparse_values.begin() + last);
}

}  // namespace pst
