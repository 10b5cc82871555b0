#include "data/validation_split.h"

#include <numeric>
#include <vector>

namespace pst {
namespace {

// SplitMix64: tiny, and the same sequence everywhere.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Dataset EmptyLike(const Dataset& d) {
  Dataset out;
  out.feature_dim = d.feature_dim;
  out.example_shape = d.example_shape;
  out.num_classes = d.num_classes;
  out.num_fields = d.num_fields;
  if (d.num_fields > 0) out.sparse_offsets = {0};
  return out;
}

void Append(const Dataset& from, int64_t i, Dataset* to) {
  const float* row = from.features.data() + i * from.feature_dim;
  to->features.insert(to->features.end(), row, row + from.feature_dim);
  to->labels.push_back(from.labels[i]);
  if (from.num_fields > 0) {
    const int64_t begin = from.sparse_offsets[i], end = from.sparse_offsets[i + 1];
    to->sparse_keys.insert(to->sparse_keys.end(), from.sparse_keys.begin() + begin,
                           from.sparse_keys.begin() + end);
    to->sparse_fields.insert(to->sparse_fields.end(), from.sparse_fields.begin() + begin,
                             from.sparse_fields.begin() + end);
    to->sparse_values.insert(to->sparse_values.end(), from.sparse_values.begin() + begin,
                             from.sparse_values.begin() + end);
    to->sparse_offsets.push_back(static_cast<int64_t>(to->sparse_keys.size()));
  }
  ++to->size;
}

}  // namespace

StatusOr<Dataset> SplitValidation(Dataset* train, int64_t count, uint64_t seed) {
  if (count < 0 || count >= train->size) {
    return InvalidArgument(std::to_string(count) +
                           " validation examples: must be >= 0 and below the " +
                           std::to_string(train->size) + " training examples");
  }
  // A partial Fisher-Yates shuffle picks the held-out indices.
  std::vector<int64_t> order(train->size);
  std::iota(order.begin(), order.end(), 0);
  uint64_t state = seed;
  std::vector<bool> held_out(train->size, false);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = i + static_cast<int64_t>(NextRandom(&state) % (train->size - i));
    std::swap(order[i], order[j]);
    held_out[order[i]] = true;
  }
  Dataset validation = EmptyLike(*train), rest = EmptyLike(*train);
  for (int64_t i = 0; i < train->size; ++i) Append(*train, i, held_out[i] ? &validation : &rest);
  *train = std::move(rest);
  return validation;
}

}  // namespace pst
