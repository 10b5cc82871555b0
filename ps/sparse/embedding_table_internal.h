// Shared by the embedding table implementations (ps/sparse/). Not a public
// header: users include ps/sparse/embedding_table.h.
#ifndef PST_PS_SPARSE_EMBEDDING_TABLE_INTERNAL_H_
#define PST_PS_SPARSE_EMBEDDING_TABLE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/mix64.h"
#include "common/status.h"
#include "ps/sparse/embedding_table.h"

namespace pst {
namespace sparse_internal {

using ::pst::Mix64;

// The shard a key lives on: unsigned modulo, so a negative key has one too.
inline int ShardOf(int64_t key, int num_shards) {
  return static_cast<int>(static_cast<uint64_t>(key) % static_cast<uint64_t>(num_shards));
}

// The optimizer's update of `row` (its slots right after it) by `grad`,
// with config.l2's term added to the gradient (EmbeddingTableConfig::l2).
inline void ApplyRegularizedRow(const Optimizer& optimizer, const EmbeddingTableConfig& config,
                                float* row, const float* grad, float lr_scale, int64_t updates) {
  const int64_t dim = config.dim;
  if (config.l2 == 0) {
    optimizer.ApplyRow(row, row + dim, grad, dim, lr_scale, updates);
    return;
  }
  thread_local std::vector<float> regularized;
  regularized.resize(dim);
  for (int64_t c = 0; c < dim; ++c) regularized[c] = grad[c] + config.l2 * row[c];
  optimizer.ApplyRow(row, row + dim, regularized.data(), dim, lr_scale, updates);
}

// "table 'NAME': " + what.
std::string TableMessage(const EmbeddingTableConfig& config, const std::string& what);

// Why this shard cannot hold `id` ("id 7 is out of range [0, 5)" for a fixed
// table, "id 7 belongs to shard 1, not this shard 0"), or "" when it can.
std::string IdProblem(const EmbeddingTableConfig& config, int64_t id);

// EmbeddingTable::CheckIds for either kind: InvalidArgument naming the table
// and the first id with a problem.
Status CheckIds(const EmbeddingTableConfig& config, const int64_t* ids, int64_t n);

// DataLoss naming the table unless rows' vectors fit its dim and
// slot_floats, applies and versions are >= 0, and every id is one this shard
// holds (IdProblem) and appears once.
Status CheckImport(const EmbeddingTableConfig& config, int64_t slot_floats,
                   const EmbeddingRows& rows);

}  // namespace sparse_internal
}  // namespace pst

#endif  // PST_PS_SPARSE_EMBEDDING_TABLE_INTERNAL_H_
