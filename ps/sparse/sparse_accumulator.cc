#include "ps/sparse/sparse_accumulator.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {

SparseAccumulator::SparseAccumulator(int64_t dim) : dim_(dim) { CHECK_GT(dim, 0); }

void SparseAccumulator::Add(const int64_t* ids, const float* rows, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    auto [it, inserted] = index_.try_emplace(ids[i], size());
    if (inserted) sums_.resize(sums_.size() + dim_, 0.0f);
    float* sum = &sums_[it->second * dim_];
    const float* row = rows + i * dim_;
    for (int64_t j = 0; j < dim_; ++j) sum[j] += row[j];
  }
}

void SparseAccumulator::TakeMean(int gradients, std::vector<int64_t>* ids,
                                 std::vector<float>* rows) {
  CHECK_GT(gradients, 0);
  ids->clear();
  ids->reserve(index_.size());
  for (const auto& [id, row] : index_) ids->push_back(id);
  std::sort(ids->begin(), ids->end());
  // Scaled by 1/N as the dense accumulator does (VariableStore), so a sparse
  // step's rows equal, bit for bit, what the dense rule gives the same sums.
  const float scale = 1.0f / gradients;
  rows->resize(ids->size() * dim_);
  for (size_t i = 0; i < ids->size(); ++i) {
    const float* sum = &sums_[index_[(*ids)[i]] * dim_];
    float* out = rows->data() + i * dim_;
    for (int64_t j = 0; j < dim_; ++j) out[j] = sum[j] * scale;
  }
  Clear();
}

void SparseAccumulator::Clear() {
  index_.clear();
  sums_.clear();
}

}  // namespace pst
