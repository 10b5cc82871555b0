// EmbeddingTables: the embedding tables of one ps store (ps/sparse/), and
// what a pull or push does to them: rows pulled by id, row gradients
// checked, applied (async, with the staleness policy per row) or
// accumulated for a sync step, checkpointed as the rows that exist.
//
// Thread safety: Initialize and Restore need the caller's exclusive hold on
// the store; Pull, Check, Apply and Stats may run concurrently (the tables
// lock themselves). The sync accumulators (Accumulate, ApplyAccumulated,
// ClearAccumulators) are serialised by the caller (the store's sync mutex).
#ifndef PST_PS_EMBEDDING_TABLES_H_
#define PST_PS_EMBEDDING_TABLES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/tensor_file.h"
#include "ps/shard_config.h"
#include "ps/sparse/changed_rows.h"
#include "ps/sparse/embedding_table.h"
#include "ps/sparse/sparse_accumulator.h"

namespace pst {

// The ids of one table a pull asks this shard for. Borrowed: points into
// the request.
struct RowRequest {
  std::string_view table;
  const int64_t* ids = nullptr;
  int64_t n = 0;
};

// A table's pulled rows: [n, dim] float32 and their versions [n] int64.
struct PulledRows {
  std::string table;
  Tensor rows;
  Tensor versions;
};

// One table's part of a push: rows (n x dim, float32 or bfloat16) of
// gradient for ids, computed from rows at `versions`. Borrowed, like
// Gradient (ps/variable_store.h).
struct SparseGradient {
  std::string_view table;
  const int64_t* ids = nullptr;
  int64_t n = 0;
  DType dtype = DType::kFloat32;
  Shape rows_shape;  // [n, dim]
  const void* rows = nullptr;
  const int64_t* versions = nullptr;
};

struct SparseApplyCounts {
  uint32_t applied = 0;  // rows applied
  uint32_t dropped = 0;  // rows dropped (too stale, or a key the table does not hold)
  uint32_t scaled = 0;   // rows applied with a scaled learning rate
  int64_t max_staleness = 0;
};

// One table's rows written since the previous export cut, with their
// values now: ids int64 [n] (a fixed table's ascending; a dynamic table's
// keys, created or written), rows float32 [n, dim], and a dynamic table's
// keys evicted since (int64 [m]; [0] for a fixed table).
struct CutRows {
  std::string table;
  Tensor ids;
  Tensor rows;
  Tensor removed;
};

// Some of a dynamic table's rows (EmbeddingTable::ListRows): keys int64
// [n], rows float32 [n, dim], and the cursor that lists the next ones (-1:
// none follow).
struct ListedRows {
  Tensor ids;
  Tensor rows;
  int64_t next = -1;
};

struct TableLoad {
  std::string name;
  EmbeddingTableStats stats;
};

// "table 'deep/embedding' [100000 x 8], fixed, 50000 rows on this shard"
// or "... [dynamic x 8], up to 1000000 rows on this shard, admitted after 2".
std::string DescribeTable(const EmbeddingTableConfig& config);

class EmbeddingTables {
 public:
  // Replaces every table. InvalidArgument for a bad or repeated config.
  // `optimizer` is borrowed and must outlive the tables.
  Status Initialize(const std::vector<EmbeddingTableConfig>& configs, const Optimizer& optimizer);
  bool empty() const { return tables_.empty(); }
  size_t size() const { return tables_.size(); }

  // The rows of each request, in order. NotFound for an unknown table,
  // InvalidArgument for an id the table refuses (naming table and id).
  // `peek`: an evaluation's pull, which changes no table (EmbeddingTable::Peek).
  Status Pull(const std::vector<RowRequest>& requests, bool peek, std::vector<PulledRows>* out);

  // OK when every gradient names a table of this shard, has [n, dim] rows
  // of float32 or bfloat16, ids the table takes, and finite values; the
  // error names the table (and the id or element).
  Status Check(const std::vector<SparseGradient>& gradients) const;

  // Async: applies checked gradients, each row with the staleness policy
  // of `config` (its staleness: the row's version now less the pushed one)
  // at `rate` times the optimizer's learning rate (the schedule's
  // multiplier).
  SparseApplyCounts Apply(const std::vector<SparseGradient>& gradients, const ShardConfig& config,
                          float rate);

  // Sync: adds checked gradients to the step's accumulators; then applies
  // each table's sum divided by `gradients` (the step's N), at `rate`
  // times the learning rate, and clears them.
  void Accumulate(const std::vector<SparseGradient>& gradients);
  uint32_t ApplyAccumulated(int gradients, float rate);
  void ClearAccumulators();

  // Checkpoints: per table "T@ids", "T@rows", "T@slots", "T@row_versions",
  // "T@applies" (docs/FORMATS.md). Restore checks every table's tensors
  // before changing any (DataLoss naming the first bad one).
  // A table on disk puts only "T@applies" and "T@disk_rows" in the part:
  // its rows go to a RocksDB checkpoint in DiskFolder(part_path, T), beside
  // the part (FailedPrecondition when part_path is empty: a replication
  // snapshot cannot hold such a table).
  Status Snapshot(NamedTensors* out, const std::string& part_path) const;
  Status Restore(const std::map<std::string, const Tensor*, std::less<>>& by_name,
                 const std::string& part_path);
  // "ckpt-5/ps-0.part", "deep/emb" -> "ckpt-5/ps-0.deep_emb.rocksdb".
  static std::string DiskFolder(const std::string& part_path, const std::string& table);

  // The incremental export: per table, the rows written since the previous
  // cut (fixed tables: ps/sparse/changed_rows.h; dynamic ones: created or
  // written, and evicted, EmbeddingTable::CutChanged), into *out with their
  // values (`with_values`; a base's cut only restarts the count). The first
  // cut starts the count and finds nothing. FailedPrecondition for a table
  // that cannot be exported (on disk).
  Status CutChangedRows(bool with_values, std::vector<CutRows>* out);
  // Up to max_rows of dynamic table `table`'s rows from `cursor` on, for a
  // base or model file (EmbeddingTable::ListRows). NotFound for an unknown
  // table; FailedPrecondition for a fixed one (pulled by id).
  StatusOr<ListedRows> ListRows(std::string_view table, int64_t cursor, int64_t max_rows);

  std::vector<TableLoad> Stats() const;
  uint64_t bytes() const;

 private:
  struct Table {
    std::unique_ptr<EmbeddingTable> table;
    std::unique_ptr<SparseAccumulator> accumulator;
    std::unique_ptr<ChangedRows> changed;  // fixed tables; null for dynamic ones
  };
  StatusOr<Table*> Find(std::string_view name) const;

  std::map<std::string, Table, std::less<>> tables_;
};

}  // namespace pst

#endif  // PST_PS_EMBEDDING_TABLES_H_
