// DiskEmbeddingTable: a dynamic EmbeddingTable (config.rows == 0) whose
// rows live on local disk in RocksDB, with the most recently used
// config.cache_rows of them in a RAM cache (--embedding_storage=disk:DIR).
// Same semantics as DynamicEmbeddingTable (admission after min_count
// sightings through the same CountMinSketch, rows from InitialRow, per-row
// versions, optimizer slots), bit for bit, except at capacity:
//
//   capacity  bounds the rows held in total (cache and disk). A key beyond
//             it reads as zeros and is counted in keys_refused, as a key not
//             admitted yet; nothing is evicted from disk (rows_evicted stays
//             0). An LRU over the disk would need an on-disk recency index
//             updated on every pull.
//   cache     an LRU over pulls and applies of at most cache_rows rows. A
//             row leaving it is written to RocksDB if it changed (dirty);
//             a miss reads the row from RocksDB (one MultiGet per Pull or
//             Apply for its missed keys).
//
// On disk: the live folder config.storage_dir/<name with '/' as '_'>-shard<k>
// (emptied at creation: a new table holds no rows; one ps process per
// folder). One RocksDB value per key:
//   key    8 bytes, big-endian uint64(key) ^ 2^63 (so bytes sort as ids)
//   value  little-endian: int64 version, dim float32 values, then
//          RowSlots() x dim float32 slots (slot after slot)
// written without a write-ahead log: a crashed ps's live folder is never
// reopened (the table restarts from a checkpoint).
//
// Checkpoints (Checkpoint / RestoreCheckpoint) are RocksDB checkpoints:
// the dirty cached rows are written and the memtable flushed, then the SST
// files are hard-linked into a folder (copied across file systems); the
// part holds only the small state (CheckpointState). Restore hard-links the
// checkpoint's SST files into a fresh live folder (SST files are never
// written after creation, so sharing them is safe), copies the others
// (MANIFEST, OPTIONS, CURRENT, which RocksDB rewrites) and opens it,
// verifying every block's checksum.
//
// Errors: a RocksDB read or write failing inside Pull, Apply or Versions
// (which cannot return a Status) is fatal (CHECK): the ps dies and the
// chief restores the last checkpoint. Create, checkpoints and restores
// return a Status.
//
// Thread safety: every method may be called concurrently. A pull, apply
// or Versions call looks up its keys in the cache under the table's mutex,
// lets go of it for the RocksDB MultiGet of the keys it missed, then takes
// it again to load them, create rows and apply, in the call's order: other
// calls of the table go on while one reads the disk. A row read while
// another call wrote it back (it was loaded, changed and evicted in the
// meantime) is read again under the mutex, so no call sees a stale row.
// The rows a call evicts are written back in one WriteBatch before it lets
// go of the mutex. Import, RestoreCheckpoint and the destructor, which
// replace or close the RocksDB, wait for every call in flight.
#ifndef PST_PS_SPARSE_DISK_EMBEDDING_TABLE_H_
#define PST_PS_SPARSE_DISK_EMBEDDING_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "ps/sparse/dynamic_embedding_table.h"
#include "ps/sparse/embedding_table.h"
#include "ps/sparse/slot_lru.h"

namespace rocksdb {
class DB;
class Iterator;
}  // namespace rocksdb

namespace pst {

// What a checkpoint part holds of a disk table besides its folder.
struct DiskCheckpointState {
  int64_t applies = 0;    // Apply calls so far (Adam's bias correction)
  int64_t rows_held = 0;  // rows in the checkpoint's RocksDB
};

// Cache counters, for the benchmark and tests.
struct DiskCacheStats {
  int64_t hits = 0;        // keys of a pull or apply found in the cache
  int64_t misses = 0;      // keys read from (or looked up in) RocksDB
  int64_t writebacks = 0;  // dirty rows written to RocksDB on eviction
  int64_t cached = 0;      // rows in the cache now
};

class DiskEmbeddingTable final : public EmbeddingTable {
 public:
  // config must be valid (EmbeddingTable::Create checks it) with rows == 0,
  // a storage_dir and cache_rows > 0. `optimizer` is borrowed and must
  // outlive the table. Unavailable naming the folder when it cannot be
  // created or RocksDB cannot open it.
  static StatusOr<std::unique_ptr<DiskEmbeddingTable>> Open(const EmbeddingTableConfig& config,
                                                            const Optimizer& optimizer);
  ~DiskEmbeddingTable() override;

  Status CheckIds(const int64_t* ids, int64_t n) const override;
  void Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) override;
  void Peek(const int64_t* ids, int64_t n, float* rows, int64_t* versions) const override;
  void Versions(const int64_t* ids, int64_t n, int64_t* versions) const override;
  int64_t Apply(const int64_t* ids, const float* grads, int64_t n, const float* lr_scales) override;
  EmbeddingTableStats Stats() const override;
  // Every row, read back from RocksDB after writing the dirty ones: for
  // tests and small tables, never for checkpoints.
  EmbeddingRows Export() const override;
  Status Import(const EmbeddingRows& rows) override;
  // The cursor counts the rows listed. Cursor 0 writes the cached rows that
  // changed into RocksDB and lists from an iterator over it as it is then;
  // a later call must go on where the previous one stopped
  // (FailedPrecondition otherwise: list again from 0).
  StatusOr<int64_t> ListRows(int64_t cursor, int64_t max_rows, std::vector<int64_t>* ids,
                             std::vector<float>* values) override;
  // Created or written rows only: a table on disk evicts nothing.
  StatusOr<DynamicCut> CutChanged(bool with_values) override;

  // Writes a RocksDB checkpoint into `folder` (which must not exist yet
  // unless it is a previous checkpoint of the same name, replaced) and
  // returns what the part must hold. Unavailable on an I/O error.
  StatusOr<DiskCheckpointState> Checkpoint(const std::string& folder);
  // Replaces every row with the checkpoint's in `folder`. DataLoss naming
  // the folder when it is missing, not a RocksDB checkpoint of this table's
  // row size, or corrupt; the table is then empty.
  Status RestoreCheckpoint(const std::string& folder, const DiskCheckpointState& state);

  DiskCacheStats cache_stats() const;
  // The live RocksDB folder.
  const std::string& live_folder() const { return live_; }

 private:
  static constexpr int32_t kNone = -1;

  DiskEmbeddingTable(const EmbeddingTableConfig& config, const Optimizer& optimizer,
                     std::string live);

  // The reads of one call: its missed keys (sorted, distinct; fixed while
  // the call is registered in reads_), what RocksDB returned for them, and
  // which were written back since the call looked them up (stale).
  struct Reads;

  // Opens live_ (creating it when `create`), into db_.
  Status OpenDb(bool create) REQUIRES(db_mu_);
  void CloseDb() REQUIRES(db_mu_);
  // Empties the cache, writing its dirty rows to RocksDB first when `flush`.
  void DropCache(bool flush) REQUIRES_SHARED(db_mu_) REQUIRES(mu_);

  // The cache slot of key, or kNone.
  int32_t Cached(int64_t key) const REQUIRES(mu_);
  // Where key's probe of index_ starts; IndexInsert and IndexErase keep
  // index_ as Cached finds it.
  size_t Home(int64_t key) const;
  void IndexInsert(int64_t key, int32_t slot) REQUIRES(mu_);
  void IndexErase(int64_t key) REQUIRES(mu_);
  // A free cache slot for key, evicting (and writing back) the least
  // recently used row when the cache is full; linked at the head.
  int32_t TakeSlot(int64_t key) REQUIRES(mu_);
  // Adds the row of `slot` to writes_ when it is dirty and marks its key
  // stale in every registered call's reads.
  void WriteBack(int32_t slot) REQUIRES(mu_);
  // Writes writes_ into RocksDB (done before mu_ is let go of).
  void FlushWrites() REQUIRES_SHARED(db_mu_) REQUIRES(mu_);

  // Looks up ids[0, n) in the cache (counting hits and misses) and, when
  // some are missed, registers *reads for them and reads them from RocksDB
  // with mu_ let go of for the MultiGet. Returns with mu_ held again.
  void ReadMissing(const int64_t* ids, int64_t n, Reads* reads) const REQUIRES_SHARED(db_mu_)
      REQUIRES(mu_);
  // Ends the registration of *reads (with mu_ held again).
  void Unregister(const Reads& reads) const REQUIRES(mu_);
  // The stored value of key, not cached now: from *reads when read there
  // and not stale, else from RocksDB (under mu_). False when the table
  // does not hold key.
  bool StoredValue(int64_t key, const Reads& reads, std::string* scratch, const char** value) const
      REQUIRES_SHARED(db_mu_) REQUIRES(mu_);
  // The cache slot of key when the table holds it (cached, or loaded into
  // the cache from StoredValue); kNone when it does not.
  int32_t Load(int64_t key, const Reads& reads) REQUIRES_SHARED(db_mu_) REQUIRES(mu_);
  // Records a row created or written, once the export tracks changes.
  void MarkChanged(int32_t slot) REQUIRES(mu_) {
    if (tracking_) changed_[slot] = 1;
  }
  // A stored value (value_bytes_) into a cache slot.
  void Decode(const char* value, int32_t slot) REQUIRES(mu_);
  float* Row(int32_t slot) const REQUIRES(mu_) { return slab_.get() + slot * row_floats_; }

  const Optimizer& optimizer_;
  const std::string live_;
  const int64_t cache_rows_;
  const int64_t slot_floats_;  // RowSlots() * dim
  const int64_t row_floats_;   // dim + slot_floats_
  const size_t value_bytes_;   // 8 + row_floats_ * 4

  // Held shared by every call that reads or writes RocksDB (across its
  // unlocked MultiGet), exclusively to open, replace or close it. Taken
  // before mu_.
  mutable SharedMutex db_mu_;
  rocksdb::DB* db_ GUARDED_BY(db_mu_) = nullptr;  // owned; closed by CloseDb

  mutable Mutex mu_;
  // The cache, per slot, defined for slots [0, used_); a slot number names
  // a row in all of them, as in DynamicEmbeddingTable.
  std::unique_ptr<float[]> slab_ GUARDED_BY(mu_);
  std::vector<int64_t> keys_ GUARDED_BY(mu_);
  std::vector<int64_t> versions_ GUARDED_BY(mu_);
  std::vector<char> dirty_ GUARDED_BY(mu_);
  // The incremental export, from its first cut on: per cached slot,
  // whether its row was created or written since the last cut, and the
  // keys of such rows that left the cache since.
  bool tracking_ GUARDED_BY(mu_) = false;
  std::vector<char> changed_ GUARDED_BY(mu_);
  std::vector<int64_t> changed_keys_ GUARDED_BY(mu_);
  // ListRows' iterator over RocksDB, and the rows it listed.
  std::unique_ptr<rocksdb::Iterator> listing_ GUARDED_BY(mu_);
  int64_t listed_ GUARDED_BY(mu_) = 0;
  SlotLru lru_ GUARDED_BY(mu_);  // the cached slots, by recency
  // The cached keys' slots: open addressing, linear probing, backward-shift
  // deletion, >= 2 x cache_rows entries (16 bytes each), the key beside its
  // slot so that a lookup costs one cache line (std::unordered_map cost a
  // fifth of a miss in allocations and pointer chasing).
  struct IndexEntry {
    int64_t key;
    int32_t slot;  // kNone: empty
  };
  const size_t index_mask_;
  std::vector<IndexEntry> index_ GUARDED_BY(mu_);
  int32_t used_ GUARDED_BY(mu_) = 0;
  // Rows written back and not yet in RocksDB, each its encoded key and
  // stored value; empty whenever mu_ is free.
  std::vector<char> writes_ GUARDED_BY(mu_);
  // The calls reading RocksDB now, or loading what they read.
  mutable std::vector<Reads*> reads_ GUARDED_BY(mu_);

  std::unique_ptr<CountMinSketch> sketch_ GUARDED_BY(mu_);  // null when min_count == 1
  int64_t rows_held_ GUARDED_BY(mu_) = 0;                   // cached or on disk
  int64_t applies_ GUARDED_BY(mu_) = 0;
  EmbeddingTableStats counts_ GUARDED_BY(mu_);  // rows_held and bytes unused
  mutable DiskCacheStats cache_counts_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_PS_SPARSE_DISK_EMBEDDING_TABLE_H_
