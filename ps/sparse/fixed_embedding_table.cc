#include "ps/sparse/fixed_embedding_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "ps/sparse/embedding_table_internal.h"

namespace pst {
namespace {

// Asks the kernel to back [data, data + bytes) with transparent huge pages
// where it can (the 2 MiB-aligned inside of it). Rows of a table larger than
// the caches are read at random: with 4 KiB pages nearly every row access
// also misses the TLB. Only a hint: nothing changes where it is not taken.
void AdviseHugePages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

namespace {

// Ids i < rows with i % num_shards == shard.
int64_t LocalRows(const EmbeddingTableConfig& config) {
  if (config.rows <= config.shard) return 0;
  return (config.rows - config.shard + config.num_shards - 1) / config.num_shards;
}

}  // namespace

FixedEmbeddingTable::FixedEmbeddingTable(const EmbeddingTableConfig& config,
                                         const Optimizer& optimizer)
    : EmbeddingTable(config),
      optimizer_(optimizer),
      local_rows_(LocalRows(config)),
      slot_floats_(optimizer.RowSlots() * config.dim),
      row_floats_(config.dim + slot_floats_),
      // new T[n] without (): default-initialised, i.e. not written, so the
      // pages stay uncommitted until a row on them is written.
      slab_(new float[local_rows_ * row_floats_]),
      versions_(new int64_t[local_rows_]),
      written_((local_rows_ + 63) / 64, 0) {
  CHECK_GT(config.rows, 0);
  AdviseHugePages(slab_.get(), local_rows_ * row_floats_ * sizeof(float));
}

int64_t FixedEmbeddingTable::LocalRow(int64_t id) const {
  CHECK(id >= 0 && id < config_.rows &&
        sparse_internal::ShardOf(id, config_.num_shards) == config_.shard)
      << sparse_internal::TableMessage(config_, "unchecked id " + std::to_string(id));
  return id / config_.num_shards;
}

void FixedEmbeddingTable::Write(int64_t local) {
  float* row = Row(local);
  InitialRow(config_.seed, config_.name, IdOf(local), config_.init_scale, config_.dim, row);
  optimizer_.InitRowSlots(row + config_.dim, config_.dim);
  versions_[local] = 0;
  written_[local >> 6] |= uint64_t{1} << (local & 63);
}

void FixedEmbeddingTable::Read(int64_t local, float* value, float* slots, int64_t* version) const {
  if (Written(local)) {
    const float* row = Row(local);
    if (value != nullptr) std::memcpy(value, row, config_.dim * sizeof(float));
    if (slots != nullptr) {
      std::memcpy(slots, row + config_.dim, slot_floats_ * sizeof(float));
    }
    *version = versions_[local];
    return;
  }
  if (value != nullptr) {
    InitialRow(config_.seed, config_.name, IdOf(local), config_.init_scale, config_.dim, value);
  }
  if (slots != nullptr) optimizer_.InitRowSlots(slots, config_.dim);
  *version = 0;
}

Status FixedEmbeddingTable::CheckIds(const int64_t* ids, int64_t n) const {
  return sparse_internal::CheckIds(config_, ids, n);
}

void FixedEmbeddingTable::Prefetch(const int64_t* ids, int64_t n, int64_t i) const {
  if (i + kPrefetchDistance >= n) return;
  const int64_t local = ids[i + kPrefetchDistance] / config_.num_shards;  // checked ids
  __builtin_prefetch(Row(local));
  __builtin_prefetch(&versions_[local]);
}

// A fixed table's pull changes nothing.
void FixedEmbeddingTable::Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) {
  Peek(ids, n, rows, versions);
}

void FixedEmbeddingTable::Peek(const int64_t* ids, int64_t n, float* rows,
                               int64_t* versions) const {
  MutexLock lock(mu_);
  for (int64_t i = 0; i < n; ++i) {
    Prefetch(ids, n, i);
    Read(LocalRow(ids[i]), rows + i * config_.dim, nullptr, &versions[i]);
  }
}

void FixedEmbeddingTable::Versions(const int64_t* ids, int64_t n, int64_t* versions) const {
  MutexLock lock(mu_);
  for (int64_t i = 0; i < n; ++i) {
    Prefetch(ids, n, i);
    const int64_t local = LocalRow(ids[i]);
    versions[i] = Written(local) ? versions_[local] : 0;
  }
}

int64_t FixedEmbeddingTable::Apply(const int64_t* ids, const float* grads, int64_t n,
                                   const float* lr_scales) {
  MutexLock lock(mu_);
  const int64_t updates = applies_++;  // Adam's t - 1: the applies before this one
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    Prefetch(ids, n, i);
    const int64_t local = LocalRow(ids[i]);
    if (!Written(local)) Write(local);
    float* row = Row(local);
    sparse_internal::ApplyRegularizedRow(optimizer_, config_, row, grads + i * dim,
                                         lr_scales == nullptr ? 1.0f : lr_scales[i], updates);
    ++versions_[local];
  }
  rows_applied_ += n;
  return n;
}

EmbeddingTableStats FixedEmbeddingTable::Stats() const {
  MutexLock lock(mu_);
  EmbeddingTableStats stats;
  stats.rows_held = local_rows_;
  stats.rows_applied = rows_applied_;
  stats.bytes = static_cast<uint64_t>(local_rows_) * row_floats_ * sizeof(float);
  return stats;
}

EmbeddingRows FixedEmbeddingTable::Export() const {
  MutexLock lock(mu_);
  // Only the rows an update wrote: the others are their initial state,
  // which Import restores for whatever it lacks. A checkpoint of a
  // 10-million-row table holds what training touched, not 10 million rows.
  EmbeddingRows out;
  const int64_t dim = config_.dim;
  for (int64_t local = 0; local < local_rows_; ++local) {
    if (!Written(local)) continue;
    const size_t i = out.ids.size();
    out.ids.push_back(IdOf(local));
    out.values.resize((i + 1) * dim);
    out.slots.resize((i + 1) * slot_floats_);
    out.versions.resize(i + 1);
    Read(local, &out.values[i * dim], slot_floats_ == 0 ? nullptr : &out.slots[i * slot_floats_],
         &out.versions[i]);
  }
  out.applies = applies_;
  return out;
}

Status FixedEmbeddingTable::Import(const EmbeddingRows& rows) {
  PST_RETURN_IF_ERROR(sparse_internal::CheckImport(config_, slot_floats_, rows));
  MutexLock lock(mu_);
  // Rows the import lacks read as their initial state again.
  std::fill(written_.begin(), written_.end(), 0);
  const int64_t dim = config_.dim;
  for (size_t i = 0; i < rows.ids.size(); ++i) {
    const int64_t local = LocalRow(rows.ids[i]);
    float* row = Row(local);
    std::memcpy(row, &rows.values[i * dim], dim * sizeof(float));
    if (slot_floats_ > 0) {
      std::memcpy(row + dim, &rows.slots[i * slot_floats_], slot_floats_ * sizeof(float));
    }
    versions_[local] = rows.versions[i];
    written_[local >> 6] |= uint64_t{1} << (local & 63);
  }
  applies_ = rows.applies;
  return Status::OK();
}

}  // namespace pst
