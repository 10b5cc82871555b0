#include "ps/sparse/dynamic_embedding_table.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "ps/sparse/embedding_table_internal.h"

namespace pst {

using sparse_internal::Mix64;

namespace {

// Distinct seeds for the index's hash and the sketch's rows, so that keys
// colliding in one do not collide in another.
constexpr uint64_t kIndexSeed = 0x2545F4914F6CDD1DULL;
constexpr uint64_t kSketchSeeds[CountMinSketch::kDepth] = {
    0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL, 0xD6E8FEB86659FD93ULL};
constexpr int64_t kMinSketchWidth = 4096;

int64_t NextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

CountMinSketch::CountMinSketch(int64_t width)
    : mask_(width - 1), counters_(static_cast<size_t>(kDepth) * width, 0) {
  CHECK_GT(width, 0);
  CHECK_EQ(width & mask_, 0) << "width " << width << " is not a power of two";
}

size_t CountMinSketch::Position(int row, int64_t key) const {
  const uint64_t h = Mix64(static_cast<uint64_t>(key) ^ kSketchSeeds[row]);
  return static_cast<size_t>(row) * (mask_ + 1) + (h & mask_);
}

int CountMinSketch::Add(int64_t key) {
  size_t at[kDepth];
  int smallest = 65535;
  for (int r = 0; r < kDepth; ++r) {
    at[r] = Position(r, key);
    smallest = std::min<int>(smallest, counters_[at[r]]);
  }
  if (smallest == 65535) return smallest;  // saturated
  for (int r = 0; r < kDepth; ++r) {
    if (counters_[at[r]] == smallest) ++counters_[at[r]];
  }
  if (++sightings_ > mask_) {  // width sightings since the last halving
    for (uint16_t& c : counters_) c >>= 1;
    sightings_ = 0;
  }
  return smallest + 1;
}

int CountMinSketch::Estimate(int64_t key) const {
  int smallest = 65535;
  for (int r = 0; r < kDepth; ++r) smallest = std::min<int>(smallest, counters_[Position(r, key)]);
  return smallest;
}

void CountMinSketch::Clear() {
  std::fill(counters_.begin(), counters_.end(), 0);
  sightings_ = 0;
}

DynamicEmbeddingTable::DynamicEmbeddingTable(const EmbeddingTableConfig& config,
                                             const Optimizer& optimizer)
    : EmbeddingTable(config),
      optimizer_(optimizer),
      capacity_(config.capacity),
      slot_floats_(optimizer.RowSlots() * config.dim),
      row_floats_(config.dim + slot_floats_),
      index_mask_(static_cast<size_t>(NextPowerOfTwo(std::max<int64_t>(2 * config.capacity, 16))) -
                  1),
      // new T[n] without (): not written, so not resident until used.
      slab_(new float[capacity_ * row_floats_]),
      keys_(new int64_t[capacity_]),
      versions_(new int64_t[capacity_]),
      lru_(capacity_),
      index_(index_mask_ + 1, kNone) {
  CHECK_EQ(config.rows, 0);
  CHECK(config.capacity > 0 && config.capacity <= kMaxCapacity) << config.capacity;
  if (config.min_count > 1) {
    sketch_ = std::make_unique<CountMinSketch>(SketchWidth(config.capacity));
  }
}

int64_t DynamicEmbeddingTable::SketchWidth(int64_t capacity) {
  return std::max(kMinSketchWidth, NextPowerOfTwo(2 * capacity));
}

uint64_t DynamicEmbeddingTable::overhead_bytes() const {
  MutexLock lock(mu_);
  return index_.size() * sizeof(int32_t) + (sketch_ ? sketch_->bytes() : 0);
}

size_t DynamicEmbeddingTable::Home(int64_t key) const {
  return Mix64(static_cast<uint64_t>(key) ^ kIndexSeed) & index_mask_;
}

int32_t DynamicEmbeddingTable::Find(int64_t key) const {
  for (size_t pos = Home(key);; pos = (pos + 1) & index_mask_) {
    const int32_t slot = index_[pos];
    if (slot == kNone || keys_[slot] == key) return slot;
  }
}

void DynamicEmbeddingTable::IndexInsert(int64_t key, int32_t slot) {
  size_t pos = Home(key);
  while (index_[pos] != kNone) pos = (pos + 1) & index_mask_;
  index_[pos] = slot;
}

void DynamicEmbeddingTable::IndexErase(int64_t key) {
  size_t hole = Home(key);
  for (;; hole = (hole + 1) & index_mask_) {
    CHECK_NE(index_[hole], kNone) << "key " << key << " is not in the index";
    if (keys_[index_[hole]] == key) break;
  }
  // Backward-shift deletion: walk the run after the hole and move back each
  // entry that may live there (its home is not cyclically in (hole, pos]),
  // so that every key stays reachable from its home without tombstones.
  for (size_t pos = (hole + 1) & index_mask_; index_[pos] != kNone; pos = (pos + 1) & index_mask_) {
    const size_t home = Home(keys_[index_[pos]]);
    if (((pos - home) & index_mask_) >= ((pos - hole) & index_mask_)) {
      index_[hole] = index_[pos];
      hole = pos;
    }
  }
  index_[hole] = kNone;
}

bool DynamicEmbeddingTable::Admit(int64_t key) {
  if (sketch_ == nullptr) return true;
  return sketch_->Add(key) >= config_.min_count;
}

int32_t DynamicEmbeddingTable::CreateRow(int64_t key) {
  int32_t slot;
  if (used_ < capacity_) {
    slot = used_++;
  } else {
    slot = lru_.least_recent();
    if (!changed_.empty()) removed_.push_back(keys_[slot]);
    IndexErase(keys_[slot]);
    lru_.Remove(slot);
    ++counts_.rows_evicted;
  }
  keys_[slot] = key;
  versions_[slot] = 0;
  float* row = Row(slot);
  InitialRow(config_.seed, config_.name, key, config_.init_scale, config_.dim, row);
  optimizer_.InitRowSlots(row + config_.dim, config_.dim);
  IndexInsert(key, slot);
  lru_.PushFront(slot);
  MarkChanged(slot);
  ++counts_.rows_created;
  return slot;
}

Status DynamicEmbeddingTable::CheckIds(const int64_t* ids, int64_t n) const {
  return sparse_internal::CheckIds(config_, ids, n);
}

void DynamicEmbeddingTable::Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) {
  MutexLock lock(mu_);
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    float* out = rows + i * dim;
    int32_t slot = Find(ids[i]);
    if (slot != kNone) {
      lru_.Touch(slot);
    } else if (Admit(ids[i])) {
      slot = CreateRow(ids[i]);
    } else {
      std::fill(out, out + dim, 0.0f);
      versions[i] = 0;
      ++counts_.keys_refused;
      continue;
    }
    std::memcpy(out, Row(slot), dim * sizeof(float));
    versions[i] = versions_[slot];
  }
}

void DynamicEmbeddingTable::Peek(const int64_t* ids, int64_t n, float* rows,
                                 int64_t* versions) const {
  MutexLock lock(mu_);
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    float* out = rows + i * dim;
    const int32_t slot = Find(ids[i]);
    versions[i] = slot == kNone ? 0 : versions_[slot];
    if (slot != kNone) {
      std::memcpy(out, Row(slot), dim * sizeof(float));
    } else if (config_.min_count <= 1) {
      InitialRow(config_.seed, config_.name, ids[i], config_.init_scale, dim, out);
    } else {
      std::fill(out, out + dim, 0.0f);
    }
  }
}

void DynamicEmbeddingTable::Versions(const int64_t* ids, int64_t n, int64_t* versions) const {
  MutexLock lock(mu_);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = Find(ids[i]);
    versions[i] = slot == kNone ? 0 : versions_[slot];
  }
}

int64_t DynamicEmbeddingTable::Apply(const int64_t* ids, const float* grads, int64_t n,
                                     const float* lr_scales) {
  MutexLock lock(mu_);
  const int64_t updates = applies_++;  // Adam's t - 1: the applies before this one
  const int64_t dim = config_.dim;
  int64_t applied = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = Find(ids[i]);
    if (slot == kNone) {
      ++counts_.rows_dropped;
      continue;
    }
    float* row = Row(slot);
    sparse_internal::ApplyRegularizedRow(optimizer_, config_, row, grads + i * dim,
                                         lr_scales == nullptr ? 1.0f : lr_scales[i], updates);
    ++versions_[slot];
    lru_.Touch(slot);
    MarkChanged(slot);
    ++applied;
  }
  counts_.rows_applied += applied;
  return applied;
}

EmbeddingTableStats DynamicEmbeddingTable::Stats() const {
  MutexLock lock(mu_);
  EmbeddingTableStats stats = counts_;
  stats.rows_held = used_;
  stats.bytes = static_cast<uint64_t>(used_) * row_floats_ * sizeof(float);
  return stats;
}

EmbeddingRows DynamicEmbeddingTable::Export() const {
  MutexLock lock(mu_);
  std::vector<std::pair<int64_t, int32_t>> order(used_);
  for (int32_t slot = 0; slot < used_; ++slot) order[slot] = {keys_[slot], slot};
  std::sort(order.begin(), order.end());
  const int64_t dim = config_.dim;
  EmbeddingRows out;
  out.ids.resize(used_);
  out.values.resize(used_ * dim);
  out.slots.resize(used_ * slot_floats_);
  out.versions.resize(used_);
  for (int32_t i = 0; i < used_; ++i) {
    const auto [key, slot] = order[i];
    const float* row = Row(slot);
    out.ids[i] = key;
    std::memcpy(&out.values[i * dim], row, dim * sizeof(float));
    if (slot_floats_ > 0) {
      std::memcpy(&out.slots[i * slot_floats_], row + dim, slot_floats_ * sizeof(float));
    }
    out.versions[i] = versions_[slot];
  }
  out.applies = applies_;
  return out;
}

Status DynamicEmbeddingTable::Import(const EmbeddingRows& rows) {
  PST_RETURN_IF_ERROR(sparse_internal::CheckImport(config_, slot_floats_, rows));
  const int64_t n = static_cast<int64_t>(rows.ids.size());
  if (n > capacity_) {
    return DataLoss(sparse_internal::TableMessage(
        config_, "cannot import rows: " + std::to_string(n) + " rows exceed the capacity " +
                     std::to_string(capacity_)));
  }
  MutexLock lock(mu_);
  std::fill(index_.begin(), index_.end(), kNone);
  used_ = 0;
  lru_.Clear();
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = used_++;
    float* row = Row(slot);
    std::memcpy(row, &rows.values[i * dim], dim * sizeof(float));
    if (slot_floats_ > 0) {
      std::memcpy(row + dim, &rows.slots[i * slot_floats_], slot_floats_ * sizeof(float));
    }
    keys_[slot] = rows.ids[i];
    versions_[slot] = rows.versions[i];
    IndexInsert(rows.ids[i], slot);
    lru_.PushFront(slot);
  }
  applies_ = rows.applies;
  // The slots name other rows now; a restore is followed by a base.
  std::fill(changed_.begin(), changed_.end(), 0);
  removed_.clear();
  counts_.rows_created = 0;  // since the restore
  if (sketch_ != nullptr) sketch_->Clear();
  return Status::OK();
}

StatusOr<int64_t> DynamicEmbeddingTable::ListRows(int64_t cursor, int64_t max_rows,
                                                  std::vector<int64_t>* ids,
                                                  std::vector<float>* values) {
  if (cursor < 0 || max_rows < 1) {
    return InvalidArgument(sparse_internal::TableMessage(
        config_, "cannot list rows from cursor " + std::to_string(cursor) + ", " +
                     std::to_string(max_rows) + " at a time"));
  }
  MutexLock lock(mu_);
  const int64_t end = std::min<int64_t>(used_, cursor + max_rows);
  const int64_t dim = config_.dim;
  for (int64_t slot = cursor; slot < end; ++slot) {
    ids->push_back(keys_[slot]);
    const float* row = Row(static_cast<int32_t>(slot));
    values->insert(values->end(), row, row + dim);
  }
  return end < used_ ? end : -1;
}

StatusOr<DynamicCut> DynamicEmbeddingTable::CutChanged(bool with_values) {
  MutexLock lock(mu_);
  DynamicCut cut;
  if (changed_.empty()) {  // the first cut: tracking starts now
    changed_.assign((capacity_ + 63) / 64, 0);
    return cut;
  }
  const int64_t dim = config_.dim;
  for (size_t w = 0; w < changed_.size(); ++w) {
    for (uint64_t bits = std::exchange(changed_[w], 0); bits != 0; bits &= bits - 1) {
      const int32_t slot = static_cast<int32_t>(w * 64 + __builtin_ctzll(bits));
      if (!with_values) continue;
      cut.ids.push_back(keys_[slot]);
      cut.values.insert(cut.values.end(), Row(slot), Row(slot) + dim);
    }
  }
  if (with_values) cut.removed = std::move(removed_);
  removed_.clear();
  return cut;
}

std::vector<int64_t> DynamicEmbeddingTable::KeysByRecency() const {
  MutexLock lock(mu_);
  std::vector<int64_t> keys;
  for (int32_t slot = lru_.least_recent(); slot != kNone; slot = lru_.more_recent(slot)) {
    keys.push_back(keys_[slot]);
  }
  return keys;
}

}  // namespace pst
