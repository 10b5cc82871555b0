// DynamicEmbeddingTable: the EmbeddingTable of config.rows == 0 (see
// embedding_table.h): any 64-bit key on this shard, rows created on first
// pull of an admitted key, at most config.capacity rows, the least recently
// used evicted to make room.
//
// Memory is the point: the table's resident size grows with the rows it
// holds and is bounded by capacity, whatever the stream of keys. Every
// per-row array is allocated once, for `capacity` rows, and not written
// (the kernel commits a page when a row on it is first created); a slot
// number (int32) names a row in all of them:
//   slab      capacity x (1 + RowSlots()) x dim floats: value, then slots
//   keys      int64 per slot
//   versions  int64 per slot
//   prev/next int32 per slot: the LRU list, an intrusive doubly linked
//             list, most recent at the head (recency: pulled or applied)
// plus two structures of fixed size:
//   index     open addressing, linear probing with backward-shift deletion
//             (no tombstones), int32 slot numbers, a power of two >= 2 x
//             capacity entries (load <= 1/2): 8 MB at capacity 1e6
//   sketch    only for min_count > 1: a count-min sketch of the pulls of
//             keys not held (CountMinSketch below): 16 MB at capacity 1e6.
// Slots are handed out 0, 1, 2, ... and, once all are used, reused by
// eviction, so a page is touched only when the table has grown onto it.
// No per-row heap node (std::unordered_map, std::list): those cost 50-100
// bytes a row in allocator headers and pointers, and free lists that the
// allocator keeps resident after eviction.
//
// Admission: a pull of a key not held counts a sighting in the sketch; the
// pull that brings its count to min_count creates the row. Until then the
// key reads as zeros, version 0 (keys_refused), and its gradients are
// dropped (rows_dropped). Duplicates within one pull count as separate
// sightings, processed in order. An evicted key's count is not reset: it
// stays admitted (unless aging has halved it below min_count since).
//
// The incremental export (CutChanged): from the first cut on, a bit per
// slot records a row created or written, and each evicted key is kept,
// until the next cut reads them. Import clears them (a restore is followed
// by a base).
//
// Import replaces every row; the LRU order becomes the order of the
// imported rows (the last one most recent), the sketch restarts empty and
// rows_created counts from 0 (the other counters go on).
#ifndef PST_PS_SPARSE_DYNAMIC_EMBEDDING_TABLE_H_
#define PST_PS_SPARSE_DYNAMIC_EMBEDDING_TABLE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/mutex.h"
#include "ps/sparse/embedding_table.h"
#include "ps/sparse/slot_lru.h"

namespace pst {

// A count-min sketch (Cormode & Muthukrishnan 2005) of key sightings, in
// fixed memory: kDepth = 4 rows of `width` (a power of two; the table uses
// >= 2 x capacity) 16-bit saturating counters, each row indexed by its own
// seeded hash of the key; a key's estimate is its smallest counter: never
// below its count (aging aside), above it only when other keys share its
// counter in every row. Conservative update: a sighting raises only the counters at
// the minimum. Aging as in TinyLFU (Einziger et al. 2017): every `width`
// sightings all counters are halved, so the sketch counts recent keys
// instead of filling up with the whole stream's history: a key must reach
// min_count within roughly 1-2 x width sightings of keys not held. Measured
// (bench_embedding_memory --min_count=2, capacity 1e6, every key new, the
// worst case): about 9% of keys are admitted on their first pull, and 0.2%
// need a third because a halving fell between their two. Halving every 2 x
// or 4 x width sightings let 40% or 57% in early. Exact for the few keys of
// a unit test.
class CountMinSketch {
 public:
  static constexpr int kDepth = 4;

  explicit CountMinSketch(int64_t width);

  // Counts one sighting of key; returns its estimated count, this one
  // included (at most 65535).
  int Add(int64_t key);
  // The estimated count of key.
  int Estimate(int64_t key) const;
  void Clear();

  int64_t width() const { return mask_ + 1; }
  uint64_t bytes() const { return counters_.size() * sizeof(uint16_t); }

 private:
  size_t Position(int row, int64_t key) const;

  const int64_t mask_;
  std::vector<uint16_t> counters_;  // kDepth x width
  int64_t sightings_ = 0;           // since the last halving
};

class DynamicEmbeddingTable final : public EmbeddingTable {
 public:
  static constexpr int64_t kMaxCapacity = int64_t{1} << 30;  // slot numbers are int32
  static constexpr int64_t kMaxMinCount = 65535;             // the sketch's counters
  // The width of the admission sketch of a table of `capacity` rows.
  static int64_t SketchWidth(int64_t capacity);

  // config must be valid (EmbeddingTable::Create checks it) with rows == 0.
  // `optimizer` is borrowed and must outlive the table.
  DynamicEmbeddingTable(const EmbeddingTableConfig& config, const Optimizer& optimizer);

  Status CheckIds(const int64_t* ids, int64_t n) const override;
  void Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) override;
  void Peek(const int64_t* ids, int64_t n, float* rows, int64_t* versions) const override;
  void Versions(const int64_t* ids, int64_t n, int64_t* versions) const override;
  int64_t Apply(const int64_t* ids, const float* grads, int64_t n, const float* lr_scales) override;
  EmbeddingTableStats Stats() const override;
  EmbeddingRows Export() const override;
  Status Import(const EmbeddingRows& rows) override;
  // The cursor is a slot number: slots [0, rows held) hold the rows.
  StatusOr<int64_t> ListRows(int64_t cursor, int64_t max_rows, std::vector<int64_t>* ids,
                             std::vector<float>* values) override;
  StatusOr<DynamicCut> CutChanged(bool with_values) override;

  // The keys held, least recently used first (for tests).
  std::vector<int64_t> KeysByRecency() const;
  // Bytes of the fixed-size structures (index, sketch), allocated at creation.
  uint64_t overhead_bytes() const;

 private:
  static constexpr int32_t kNone = -1;

  size_t Home(int64_t key) const;
  // The slot holding key, or kNone.
  int32_t Find(int64_t key) const REQUIRES(mu_);
  void IndexInsert(int64_t key, int32_t slot) REQUIRES(mu_);
  void IndexErase(int64_t key) REQUIRES(mu_);
  // Counts a sighting of a key not held; true when it is admitted now.
  bool Admit(int64_t key) REQUIRES(mu_);
  // A new row for key in its initial state, evicting the least recently
  // used row when the table is full; returns its slot.
  int32_t CreateRow(int64_t key) REQUIRES(mu_);
  // Records a row created or written, once the export tracks changes.
  void MarkChanged(int32_t slot) REQUIRES(mu_) {
    if (!changed_.empty()) changed_[slot / 64] |= uint64_t{1} << (slot % 64);
  }
  float* Row(int32_t slot) const REQUIRES(mu_) { return slab_.get() + slot * row_floats_; }

  const Optimizer& optimizer_;
  const int64_t capacity_;
  const int64_t slot_floats_;  // RowSlots() * dim
  const int64_t row_floats_;   // dim + slot_floats_
  const size_t index_mask_;

  mutable Mutex mu_;
  // Per slot, defined for slots [0, used_).
  std::unique_ptr<float[]> slab_ GUARDED_BY(mu_);
  std::unique_ptr<int64_t[]> keys_ GUARDED_BY(mu_);
  std::unique_ptr<int64_t[]> versions_ GUARDED_BY(mu_);
  SlotLru lru_ GUARDED_BY(mu_);                             // the slots held, by recency
  std::vector<int32_t> index_ GUARDED_BY(mu_);              // slot numbers or kNone
  std::unique_ptr<CountMinSketch> sketch_ GUARDED_BY(mu_);  // null when min_count == 1
  int32_t used_ GUARDED_BY(mu_) = 0;                        // slots ever handed out
  int64_t applies_ GUARDED_BY(mu_) = 0;
  EmbeddingTableStats counts_ GUARDED_BY(mu_);  // rows_held and bytes unused
  // The incremental export, from its first cut on: a bit per slot created
  // or written since the last cut (capacity bits), and the keys evicted
  // since (they grow with the evictions between two cuts).
  std::vector<uint64_t> changed_ GUARDED_BY(mu_);
  std::vector<int64_t> removed_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_PS_SPARSE_DYNAMIC_EMBEDDING_TABLE_H_
