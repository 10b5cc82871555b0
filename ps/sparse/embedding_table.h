// EmbeddingTable: one ps shard's part of a row-sparse variable [rows, dim]
// (an embedding table): the rows this shard holds, each with its optimizer
// slots and a version (the updates applied to it). Workers pull and push it
// by row id, never whole.
//
// Two kinds:
//   fixed   (config.rows > 0): ids in [0, rows), partitioned by id mod
//           num_shards (TensorFlow's "mod" strategy): id i lives on shard
//           i % num_shards at local row i / num_shards. Every row exists.
//   dynamic (config.rows == 0, config.capacity > 0): any 64-bit key; a row
//           is created when a pull first touches an admitted key, and when
//           the shard holds `capacity` rows the least recently used one
//           (pulled or pushed longest ago) is evicted to make room. A key is
//           admitted once pulls have seen it `min_count` times; until then it
//           reads as zeros and its gradient is dropped.
// Every row starts from InitialRow(seed, name, key): a seeded function of
// the table and the key, so a restart or another replica creates the same
// row. Memory: a dynamic table's storage grows with the rows it holds, never
// past capacity rows (plus a fixed per-row index overhead).
//
// Thread safety: every method may be called concurrently (one mutex per
// table; a dynamic table's pull changes its recency and may create rows).
#ifndef PST_PS_SPARSE_EMBEDDING_TABLE_H_
#define PST_PS_SPARSE_EMBEDDING_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/ctr/initial_row.h"
#include "ps/optimizers/optimizer.h"

namespace pst {

struct EmbeddingTableConfig {
  std::string name;       // "embedding/table"
  int64_t dim = 0;        // > 0
  int64_t rows = 0;       // fixed: rows of the whole table (all shards); 0: dynamic
  int64_t capacity = 0;   // dynamic: the most rows this shard holds (> 0)
  int64_t min_count = 1;  // dynamic: pulls that must see a key before it gets a row (>= 1)
  uint64_t seed = 0;
  float init_scale = 0.05f;  // initial values uniform in [-init_scale, init_scale]
  // L2 on the rows a gradient touches, lazily (TensorFlow's sparse applies
  // do the same): each applied row gradient gains l2 * row, the gradient
  // of 0.5 * l2 * |row|^2, before the optimizer sees it. Rows no batch
  // touches are left alone. >= 0; 0: none.
  float l2 = 0;
  int shard = 0;  // this shard, in [0, num_shards)
  int num_shards = 1;
  // Dynamic tables only: "" keeps every row in RAM; a folder puts the rows
  // in RocksDB under it with the cache_rows most recently used in RAM
  // (ps/sparse/disk_embedding_table.h).
  std::string storage_dir;
  int64_t cache_rows = 0;  // with storage_dir: rows in the RAM cache (> 0)
};

struct EmbeddingTableStats {
  int64_t rows_held = 0;     // rows that exist on this shard now
  int64_t rows_created = 0;  // dynamic: rows created since start (or restore)
  int64_t rows_evicted = 0;  // dynamic: rows evicted to make room
  int64_t keys_refused = 0;  // dynamic: pulled keys read as zeros (not admitted yet)
  int64_t rows_dropped = 0;  // gradient rows for keys not held (not admitted, evicted)
  int64_t rows_applied = 0;  // gradient rows applied
  uint64_t bytes = 0;        // values and slots of the rows held
};

// Every row a table holds, for checkpoints: ids[i]'s value is
// values[i*dim ...], its slots slots[i*slot_floats ...] (RowSlots()*dim
// floats, slot after slot), its version versions[i].
struct EmbeddingRows {
  std::vector<int64_t> ids;
  std::vector<float> values;
  std::vector<float> slots;
  std::vector<int64_t> versions;
  int64_t applies = 0;  // Apply calls so far (Adam's bias correction)
};

// A dynamic table's rows changed since the previous export cut
// (EmbeddingTable::CutChanged): the keys created or written, with their
// values now (ids[i]'s value is values[i*dim ...]), and the keys evicted.
// A key may be in both: evicted, then created again.
struct DynamicCut {
  std::vector<int64_t> ids;
  std::vector<float> values;
  std::vector<int64_t> removed;
};

class EmbeddingTable {
 public:
  // InvalidArgument naming the table for a config out of range.
  // `optimizer` is borrowed and must outlive the table.
  static StatusOr<std::unique_ptr<EmbeddingTable>> Create(const EmbeddingTableConfig& config,
                                                          const Optimizer& optimizer);
  virtual ~EmbeddingTable() = default;

  const EmbeddingTableConfig& config() const { return config_; }
  int64_t dim() const { return config_.dim; }
  bool dynamic() const { return config_.rows == 0; }

  // OK when every id may be pulled or pushed on this shard; else
  // InvalidArgument "table 'NAME': id ID is out of range [0, ROWS)" (fixed
  // tables), or "... id ID belongs to shard S, not this shard K".
  virtual Status CheckIds(const int64_t* ids, int64_t n) const = 0;

  // Writes the rows of `ids` (checked) into rows (n x dim) and their
  // versions into versions (n). Dynamic: counts a sighting of each id,
  // creates the rows of admitted keys it lacks (evicting as needed), and
  // reads a key not admitted as zeros with version 0.
  virtual void Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) = 0;

  // Pull without changing anything: an evaluation's read. A dynamic table
  // reads a key it does not hold as the row a pull would create
  // (InitialRow when min_count is 1, else zeros), version 0, and counts no
  // sighting, creates and evicts no row and leaves the recency alone. A
  // fixed table's Pull changes nothing: its Peek is its Pull.
  virtual void Peek(const int64_t* ids, int64_t n, float* rows, int64_t* versions) const = 0;

  // The versions of `ids` now (0 for a key not held).
  virtual void Versions(const int64_t* ids, int64_t n, int64_t* versions) const = 0;

  // Applies grads (n x dim, finite: the caller checks) to the rows of `ids`
  // (checked) through the optimizer, row by row, lazily: only these rows
  // and their slots change. lr_scales (n, or null: all 1) scale each row's
  // learning rate (the "scale" staleness policy). Rows the table does not
  // hold are skipped and counted as dropped. Duplicate ids are applied one
  // after the other. Returns the rows applied.
  virtual int64_t Apply(const int64_t* ids, const float* grads, int64_t n,
                        const float* lr_scales) = 0;

  virtual EmbeddingTableStats Stats() const = 0;

  // Every row held, ascending by id; for a fixed table, the rows an update
  // has written (the others hold their initial values).
  virtual EmbeddingRows Export() const = 0;
  // Replaces the table's rows with `rows` (as Export gives them; a fixed
  // table's rows not in it go back to their initial values). DataLoss
  // naming the table when the sizes do not match its dim and optimizer, an
  // id is out of range or on another shard, or a dynamic table would exceed
  // its capacity; nothing changes then.
  virtual Status Import(const EmbeddingRows& rows) = 0;

  // Dynamic tables, for model files and the incremental export; a table
  // that cannot (a fixed one: its rows are pulled by id) says
  // FailedPrecondition naming itself.
  //
  // Up to max_rows (> 0) of the rows held, from `cursor` on (0: the first),
  // appended to *ids and *values (dim floats each); returns the cursor of
  // the next call, or -1 once every row was listed. A key is listed once
  // when no row is created or evicted meanwhile; otherwise a key evicted
  // and created again may be listed twice or not at all (then its row is
  // new: in the next cut).
  virtual StatusOr<int64_t> ListRows(int64_t cursor, int64_t max_rows, std::vector<int64_t>* ids,
                                     std::vector<float>* values);
  // The rows changed since the previous cut, with their values when
  // `with_values` (a base's cut only restarts the count). The first cut
  // starts the count and finds nothing; until then nothing is tracked.
  virtual StatusOr<DynamicCut> CutChanged(bool with_values);

 protected:
  explicit EmbeddingTable(const EmbeddingTableConfig& config) : config_(config) {}
  const EmbeddingTableConfig config_;
};

}  // namespace pst

#endif  // PST_PS_SPARSE_EMBEDDING_TABLE_H_
