// SparseAccumulator: the gradients of one embedding table in one sync step,
// rows summed by id across the step's pushes (and within a push).
//
// The averaging rule: the step applies, for every id any push touched, the
// sum of its rows divided by the number of gradients the step aggregates
// (N), not by the number of gradients that contained the id (TensorFlow's
// SparseConditionalAccumulator divides by the latter). So a sparse step
// applies exactly the mean of the N gradients as if they were dense, as the
// dense accumulator does.
//
// Not thread-safe: the store serialises a step's pushes.
#ifndef PST_PS_SPARSE_SPARSE_ACCUMULATOR_H_
#define PST_PS_SPARSE_SPARSE_ACCUMULATOR_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace pst {

class SparseAccumulator {
 public:
  explicit SparseAccumulator(int64_t dim);

  // Adds rows (n x dim) for ids (n; duplicates are summed).
  void Add(const int64_t* ids, const float* rows, int64_t n);

  // The ids held, ascending, and for each its summed rows divided by
  // `gradients` (> 0); empties the accumulator.
  void TakeMean(int gradients, std::vector<int64_t>* ids, std::vector<float>* rows);

  void Clear();
  int64_t size() const { return static_cast<int64_t>(index_.size()); }

 private:
  const int64_t dim_;
  std::unordered_map<int64_t, int64_t> index_;  // id -> row in sums_
  std::vector<float> sums_;                     // size() x dim
};

}  // namespace pst

#endif  // PST_PS_SPARSE_SPARSE_ACCUMULATOR_H_
