// FixedEmbeddingTable: the EmbeddingTable of config.rows > 0 (see
// embedding_table.h): ids [0, rows), id i on shard i % num_shards at local
// row i / num_shards.
//
// Memory: one slab of local rows x (1 + RowSlots()) x dim floats (a row's
// value, then its slots), allocated at creation but not written, so the
// kernel commits a page only when a row on it is first applied to (or
// imported): creating a table costs no time and no resident memory. A bitmap
// says which rows have been written; a row not yet written reads as its
// InitialRow, fresh slots, version 0 (and is written so on its first apply).
// Stats().bytes counts the whole slab, as every row exists.
//
// Export lists every local row (unwritten ones as their initial state);
// Import takes any subset of them and resets the rows it lacks to their
// initial state.
#ifndef PST_PS_SPARSE_FIXED_EMBEDDING_TABLE_H_
#define PST_PS_SPARSE_FIXED_EMBEDDING_TABLE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/mutex.h"
#include "ps/sparse/embedding_table.h"

namespace pst {

class FixedEmbeddingTable final : public EmbeddingTable {
 public:
  // config must be valid (EmbeddingTable::Create checks it) with rows > 0.
  // `optimizer` is borrowed and must outlive the table.
  FixedEmbeddingTable(const EmbeddingTableConfig& config, const Optimizer& optimizer);

  Status CheckIds(const int64_t* ids, int64_t n) const override;
  void Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) override;
  void Peek(const int64_t* ids, int64_t n, float* rows, int64_t* versions) const override;
  void Versions(const int64_t* ids, int64_t n, int64_t* versions) const override;
  int64_t Apply(const int64_t* ids, const float* grads, int64_t n, const float* lr_scales) override;
  EmbeddingTableStats Stats() const override;
  EmbeddingRows Export() const override;
  Status Import(const EmbeddingRows& rows) override;

  // The rows this shard holds: ids shard, shard + num_shards, ... below rows.
  int64_t local_rows() const { return local_rows_; }

 private:
  // The local row of a (checked) id; CHECK-fails for an id not on this shard.
  int64_t LocalRow(int64_t id) const;
  int64_t IdOf(int64_t local) const { return local * config_.num_shards + config_.shard; }
  bool Written(int64_t local) const REQUIRES(mu_) {
    return (written_[local >> 6] >> (local & 63)) & 1;
  }
  float* Row(int64_t local) const REQUIRES(mu_) { return slab_.get() + local * row_floats_; }
  // Starts loading the row and version of ids[i + kPrefetchDistance]: in a
  // table larger than the caches every row is a memory access, and the
  // loop over a request's ids would otherwise wait for each in turn.
  static constexpr int64_t kPrefetchDistance = 8;
  void Prefetch(const int64_t* ids, int64_t n, int64_t i) const REQUIRES(mu_);
  // Writes a row's initial state (value, slots, version 0) and marks it.
  void Write(int64_t local) REQUIRES(mu_);
  // The value, slots and version of a local row, written or not.
  void Read(int64_t local, float* value, float* slots, int64_t* version) const REQUIRES(mu_);

  const Optimizer& optimizer_;
  const int64_t local_rows_;
  const int64_t slot_floats_;  // RowSlots() * dim
  const int64_t row_floats_;   // dim + slot_floats_

  mutable Mutex mu_;
  // local_rows_ x row_floats_; a row's floats are defined once Written.
  std::unique_ptr<float[]> slab_ GUARDED_BY(mu_);
  std::unique_ptr<int64_t[]> versions_ GUARDED_BY(mu_);  // defined once Written
  std::vector<uint64_t> written_ GUARDED_BY(mu_);        // bitmap of local rows
  int64_t applies_ GUARDED_BY(mu_) = 0;
  int64_t rows_applied_ GUARDED_BY(mu_) = 0;
};

}  // namespace pst

#endif  // PST_PS_SPARSE_FIXED_EMBEDDING_TABLE_H_
