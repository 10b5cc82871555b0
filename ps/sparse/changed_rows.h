// ChangedRows: which rows of one fixed table on one shard an update wrote
// since the last cut, for the incremental export (job/export_files.h). Off
// until the first Cut (a run that never exports pays one relaxed load per
// apply).
//
// A bit per row of this shard (row id i is bit i / num_shards: 1.25 MB for a
// 10M-row table over one ps), set with an atomic OR, no lock; a cut reads
// and clears the words. (A dynamic table tracks its own changes by slot:
// EmbeddingTable::CutChanged.)
//
// A row written while a cut runs is in that cut or the next one, never in
// neither: a word is cleared with the same atomic exchange that reads it.
//
// Thread safety: Mark from any thread, concurrently with one Cut at a time.
#ifndef PST_PS_SPARSE_CHANGED_ROWS_H_
#define PST_PS_SPARSE_CHANGED_ROWS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "ps/sparse/embedding_table.h"

namespace pst {

class ChangedRows {
 public:
  // `config` is a fixed table's (rows > 0).
  explicit ChangedRows(const EmbeddingTableConfig& config);

  // Records ids[0..n) (this shard's, in range) as written, once tracking is on.
  void Mark(const int64_t* ids, int64_t n);
  // The ids written since the previous cut, ascending; from now on every
  // write is tracked. The first cut returns nothing: it starts the count.
  std::vector<int64_t> Cut();

 private:
  const int64_t num_shards_;
  const int64_t shard_;
  const int64_t words_;
  std::atomic<bool> tracking_{false};
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;  // a bit per row of this shard
};

}  // namespace pst

#endif  // PST_PS_SPARSE_CHANGED_ROWS_H_
