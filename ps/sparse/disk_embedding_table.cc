#include "ps/sparse/disk_embedding_table.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

#include "ps/sparse/embedding_table_internal.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using sparse_internal::TableMessage;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the stored rows are little-endian memory images");

constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr uint64_t kIndexSeed = 0x2545F4914F6CDD1DULL;

int64_t NextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The RocksDB key of `key`: big-endian, sign bit flipped, so that the
// bytewise order of keys is the order of the signed ids.
void EncodeKey(int64_t key, char* out) {
  const uint64_t k = static_cast<uint64_t>(key) ^ kSignBit;
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>(k >> (56 - 8 * b));
}

std::string EncodeKey(int64_t key) {
  std::string out(8, '\0');
  EncodeKey(key, out.data());
  return out;
}

int64_t DecodeKey(const rocksdb::Slice& s) {
  CHECK_EQ(s.size(), 8u);
  uint64_t k = 0;
  for (int b = 0; b < 8; ++b) k = (k << 8) | static_cast<unsigned char>(s[b]);
  return static_cast<int64_t>(k ^ kSignBit);
}

std::string FolderName(const EmbeddingTableConfig& config) {
  std::string name = config.name;
  std::replace(name.begin(), name.end(), '/', '_');
  return config.storage_dir + "/" + name + "-shard" + std::to_string(config.shard);
}

rocksdb::Options DbOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  // Reads go to the table's own row cache; RocksDB's block cache stays
  // small so that RAM is bounded by cache_rows, not by the files.
  options.max_open_files = 256;
  // Rows are floats: compression saves little and costs every read. A new
  // key is a miss that is in no file: bloom filters answer that without
  // reading a block of each level.
  options.compression = rocksdb::kNoCompression;
  // Most misses of a stream are new keys, in no file and not in the
  // memtable either: a bloom filter over the memtable's keys answers that
  // without walking its skip list.
  options.memtable_whole_key_filtering = true;
  options.memtable_prefix_bloom_size_ratio = 0.02;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = true;
  // A hash index inside each data block: a point lookup finds its key
  // without a binary search of the block's restart points.
  table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

// Rows are written whole and read whole; RocksDB's checksums are verified
// when a checkpoint is restored (VerifyChecksum), not on every lookup.
rocksdb::ReadOptions RowReads() {
  rocksdb::ReadOptions r;
  r.verify_checksums = false;
  return r;
}

rocksdb::WriteOptions NoWal() {
  rocksdb::WriteOptions w;
  w.disableWAL = true;
  return w;
}

}  // namespace

struct DiskEmbeddingTable::Reads {
  // The position of key in keys, or -1.
  int64_t Find(int64_t key) const {
    auto it = std::lower_bound(keys.begin(), keys.end(), key);
    return it != keys.end() && *it == key ? it - keys.begin() : -1;
  }

  std::vector<int64_t> keys;
  std::vector<char> encoded;  // 8 bytes a key, EncodeKey
  std::vector<rocksdb::PinnableSlice> values;
  std::vector<rocksdb::Status> statuses;
  std::vector<char> stale;  // the table's mu_ guards it while registered
};

StatusOr<std::unique_ptr<DiskEmbeddingTable>> DiskEmbeddingTable::Open(
    const EmbeddingTableConfig& config, const Optimizer& optimizer) {
  CHECK_EQ(config.rows, 0);
  CHECK(!config.storage_dir.empty());
  CHECK_GT(config.cache_rows, 0);
  std::unique_ptr<DiskEmbeddingTable> table(
      new DiskEmbeddingTable(config, optimizer, FolderName(config)));
  WriterMutexLock lock(table->db_mu_);
  PST_RETURN_IF_ERROR(table->OpenDb(/*create=*/true));
  return table;
}

DiskEmbeddingTable::DiskEmbeddingTable(const EmbeddingTableConfig& config,
                                       const Optimizer& optimizer, std::string live)
    : EmbeddingTable(config),
      optimizer_(optimizer),
      live_(std::move(live)),
      cache_rows_(std::min(config.cache_rows, config.capacity)),
      slot_floats_(optimizer.RowSlots() * config.dim),
      row_floats_(config.dim + slot_floats_),
      value_bytes_(sizeof(int64_t) + row_floats_ * sizeof(float)),
      // Not written, so not resident until the cache grows onto it.
      slab_(new float[cache_rows_ * row_floats_]),
      lru_(cache_rows_),
      index_mask_(static_cast<size_t>(NextPowerOfTwo(std::max<int64_t>(2 * cache_rows_, 16))) - 1),
      index_(index_mask_ + 1, IndexEntry{0, kNone}) {
  if (config.min_count > 1) {
    sketch_ = std::make_unique<CountMinSketch>(DynamicEmbeddingTable::SketchWidth(config.capacity));
  }
}

DiskEmbeddingTable::~DiskEmbeddingTable() {
  WriterMutexLock lock(db_mu_);
  {
    MutexLock cache_lock(mu_);
    listing_.reset();  // before the DB it reads
  }
  CloseDb();
}

Status DiskEmbeddingTable::OpenDb(bool create) {
  std::error_code error;
  if (create) {
    // A new table holds no rows: what an earlier process left is discarded.
    fs::remove_all(live_, error);
    fs::create_directories(live_, error);
    if (error) {
      return Unavailable(
          TableMessage(config_, "cannot create the folder " + live_ + ": " + error.message()));
    }
  }
  rocksdb::Options options = DbOptions();
  options.create_if_missing = create;
  const rocksdb::Status s = rocksdb::DB::Open(options, live_, &db_);
  if (!s.ok()) {
    db_ = nullptr;
    return Unavailable(
        TableMessage(config_, "cannot open RocksDB in " + live_ + ": " + s.ToString()));
  }
  return Status::OK();
}

void DiskEmbeddingTable::CloseDb() {
  if (db_ == nullptr) return;
  const rocksdb::Status s = db_->Close();
  LOG_IF(WARNING, !s.ok()) << TableMessage(config_, "closing " + live_ + ": " + s.ToString());
  delete db_;
  db_ = nullptr;
}

void DiskEmbeddingTable::DropCache(bool flush) {
  if (flush) {
    for (int32_t slot = 0; slot < used_; ++slot) WriteBack(slot);
    FlushWrites();
  }
  std::fill(index_.begin(), index_.end(), IndexEntry{0, kNone});
  keys_.clear();
  versions_.clear();
  dirty_.clear();
  // The rows are about to be replaced: a base follows, and a listing ends.
  changed_.clear();
  changed_keys_.clear();
  listing_.reset();
  used_ = 0;
  lru_.Clear();
}

size_t DiskEmbeddingTable::Home(int64_t key) const {
  return sparse_internal::Mix64(static_cast<uint64_t>(key) ^ kIndexSeed) & index_mask_;
}

int32_t DiskEmbeddingTable::Cached(int64_t key) const {
  for (size_t pos = Home(key);; pos = (pos + 1) & index_mask_) {
    const IndexEntry& e = index_[pos];
    if (e.slot == kNone || e.key == key) return e.slot;
  }
}

void DiskEmbeddingTable::IndexInsert(int64_t key, int32_t slot) {
  size_t pos = Home(key);
  while (index_[pos].slot != kNone) pos = (pos + 1) & index_mask_;
  index_[pos] = IndexEntry{key, slot};
}

void DiskEmbeddingTable::IndexErase(int64_t key) {
  size_t hole = Home(key);
  for (;; hole = (hole + 1) & index_mask_) {
    CHECK_NE(index_[hole].slot, kNone) << "key " << key << " is not in the index";
    if (index_[hole].key == key) break;
  }
  // Backward-shift deletion, as in DynamicEmbeddingTable::IndexErase.
  for (size_t pos = (hole + 1) & index_mask_; index_[pos].slot != kNone;
       pos = (pos + 1) & index_mask_) {
    const size_t home = Home(index_[pos].key);
    if (((pos - home) & index_mask_) >= ((pos - hole) & index_mask_)) {
      index_[hole] = index_[pos];
      hole = pos;
    }
  }
  index_[hole].slot = kNone;
}

void DiskEmbeddingTable::WriteBack(int32_t slot) {
  if (!dirty_[slot]) return;
  // key, version, row: the slot is reused at once, so the row is copied.
  const size_t at = writes_.size();
  writes_.resize(at + 8 + value_bytes_);
  EncodeKey(keys_[slot], &writes_[at]);
  std::memcpy(&writes_[at + 8], &versions_[slot], sizeof(int64_t));
  std::memcpy(&writes_[at + 16], Row(slot), row_floats_ * sizeof(float));
  dirty_[slot] = 0;
  ++cache_counts_.writebacks;
  // A call that read this key from RocksDB before now may hold the row as
  // it was: it must read it again.
  for (Reads* reads : reads_) {
    const int64_t at = reads->Find(keys_[slot]);
    if (at >= 0) reads->stale[at] = 1;
  }
}

void DiskEmbeddingTable::FlushWrites() {
  if (writes_.empty()) return;
  // In key order: the memtable's skip list inserts each key from where the
  // previous one went in (RocksDB keeps that splice), so sorted keys cost a
  // few levels of its search instead of a walk from the top, which was
  // most of a miss's cost (bench_disk_table). Stable: were a key there
  // twice, its later row would still win.
  const size_t entry = 8 + value_bytes_, n = writes_.size() / entry;
  std::vector<const char*> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = &writes_[i * entry];
  std::stable_sort(order.begin(), order.end(),
                   [](const char* a, const char* b) { return std::memcmp(a, b, 8) < 0; });
  rocksdb::WriteBatch batch(n * (entry + 16));
  for (const char* e : order) {
    const rocksdb::Status s = batch.Put(rocksdb::Slice(e, 8), rocksdb::Slice(e + 8, value_bytes_));
    CHECK(s.ok()) << TableMessage(config_, "writing rows to " + live_ + ": " + s.ToString());
  }
  const rocksdb::Status s = db_->Write(NoWal(), &batch);
  CHECK(s.ok()) << TableMessage(config_, "writing rows to " + live_ + ": " + s.ToString());
  writes_.clear();
}

int32_t DiskEmbeddingTable::TakeSlot(int64_t key) {
  int32_t slot;
  if (used_ < cache_rows_) {
    slot = used_++;
    keys_.push_back(key);
    versions_.push_back(0);
    dirty_.push_back(0);
    changed_.push_back(0);
  } else {
    slot = lru_.least_recent();
    if (changed_[slot]) changed_keys_.push_back(keys_[slot]);
    changed_[slot] = 0;
    WriteBack(slot);
    IndexErase(keys_[slot]);
    lru_.Remove(slot);
  }
  keys_[slot] = key;
  IndexInsert(key, slot);
  lru_.PushFront(slot);
  return slot;
}

void DiskEmbeddingTable::Decode(const char* value, int32_t slot) {
  std::memcpy(&versions_[slot], value, sizeof(int64_t));
  std::memcpy(Row(slot), value + sizeof(int64_t), row_floats_ * sizeof(float));
  dirty_[slot] = 0;
}

void DiskEmbeddingTable::ReadMissing(const int64_t* ids, int64_t n, Reads* reads) const {
  std::vector<int64_t>& missing = reads->keys;
  for (int64_t i = 0; i < n; ++i) {
    if (Cached(ids[i]) == kNone) missing.push_back(ids[i]);
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  const size_t m = missing.size();
  cache_counts_.hits += n - static_cast<int64_t>(m);
  cache_counts_.misses += static_cast<int64_t>(m);
  if (m == 0) return;
  reads->stale.assign(m, 0);
  reads_.push_back(reads);
  mu_.Unlock();
  // Without mu_: only this call touches reads' keys, values and statuses;
  // db_mu_, held shared, keeps db_ open.
  reads->encoded.resize(m * 8);
  std::vector<rocksdb::Slice> keys(m);
  for (size_t i = 0; i < m; ++i) {
    EncodeKey(missing[i], &reads->encoded[i * 8]);
    keys[i] = rocksdb::Slice(&reads->encoded[i * 8], 8);
  }
  reads->values.resize(m);
  reads->statuses.resize(m);
  // The encoded keys sort as the ids do, and the ids are sorted.
  db_->MultiGet(RowReads(), db_->DefaultColumnFamily(), m, keys.data(), reads->values.data(),
                reads->statuses.data(), /*sorted_input=*/true);
  mu_.Lock();
}

void DiskEmbeddingTable::Unregister(const Reads& reads) const {
  if (reads.keys.empty()) return;
  reads_.erase(std::find(reads_.begin(), reads_.end(), &reads));
}

bool DiskEmbeddingTable::StoredValue(int64_t key, const Reads& reads, std::string* scratch,
                                     const char** value) const {
  const int64_t at = reads.Find(key);
  rocksdb::Status s;
  if (at >= 0 && !reads.stale[at]) {
    s = reads.statuses[at];
    if (s.ok()) {
      CHECK_EQ(reads.values[at].size(), value_bytes_)
          << TableMessage(config_, "a row in " + live_ + " has the wrong size");
      *value = reads.values[at].data();
    }
  } else {
    // Written back since the MultiGet (or cached then and evicted since):
    // in RocksDB now, as every write-back is once mu_ is let go of.
    s = db_->Get(RowReads(), EncodeKey(key), scratch);
    if (s.ok()) {
      CHECK_EQ(scratch->size(), value_bytes_)
          << TableMessage(config_, "a row in " + live_ + " has the wrong size");
      *value = scratch->data();
    }
  }
  if (s.IsNotFound()) return false;
  CHECK(s.ok()) << TableMessage(config_, "reading a row from " + live_ + ": " + s.ToString());
  return true;
}

int32_t DiskEmbeddingTable::Load(int64_t key, const Reads& reads) {
  int32_t slot = Cached(key);
  if (slot != kNone) return slot;
  // The fallback Get must see the rows this call evicted.
  const int64_t at = reads.Find(key);
  if (at < 0 || reads.stale[at]) FlushWrites();
  std::string scratch;
  const char* value = nullptr;
  if (!StoredValue(key, reads, &scratch, &value)) return kNone;
  slot = TakeSlot(key);
  Decode(value, slot);
  return slot;
}

Status DiskEmbeddingTable::CheckIds(const int64_t* ids, int64_t n) const {
  return sparse_internal::CheckIds(config_, ids, n);
}

void DiskEmbeddingTable::Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  Reads reads;
  ReadMissing(ids, n, &reads);
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    float* out = rows + i * dim;
    int32_t slot = Load(ids[i], reads);
    if (slot != kNone) {
      lru_.Touch(slot);
    } else if ((sketch_ == nullptr || sketch_->Add(ids[i]) >= config_.min_count) &&
               rows_held_ < config_.capacity) {
      slot = TakeSlot(ids[i]);
      versions_[slot] = 0;
      float* row = Row(slot);
      InitialRow(config_.seed, config_.name, ids[i], config_.init_scale, dim, row);
      optimizer_.InitRowSlots(row + dim, dim);
      dirty_[slot] = 1;
      MarkChanged(slot);
      ++rows_held_;
      ++counts_.rows_created;
    } else {
      std::fill(out, out + dim, 0.0f);
      versions[i] = 0;
      ++counts_.keys_refused;
      continue;
    }
    std::memcpy(out, Row(slot), dim * sizeof(float));
    versions[i] = versions_[slot];
  }
  FlushWrites();
  Unregister(reads);
}

void DiskEmbeddingTable::Peek(const int64_t* ids, int64_t n, float* rows, int64_t* versions) const {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  Reads reads;
  ReadMissing(ids, n, &reads);
  std::string scratch;
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    float* out = rows + i * dim;
    const int32_t slot = Cached(ids[i]);
    const char* value = nullptr;
    versions[i] = 0;
    if (slot != kNone) {
      versions[i] = versions_[slot];
      std::memcpy(out, Row(slot), dim * sizeof(float));
    } else if (StoredValue(ids[i], reads, &scratch, &value)) {
      std::memcpy(&versions[i], value, sizeof(int64_t));
      std::memcpy(out, value + sizeof(int64_t), dim * sizeof(float));
    } else if (config_.min_count <= 1) {
      InitialRow(config_.seed, config_.name, ids[i], config_.init_scale, dim, out);
    } else {
      std::fill(out, out + dim, 0.0f);
    }
  }
  Unregister(reads);
}

void DiskEmbeddingTable::Versions(const int64_t* ids, int64_t n, int64_t* versions) const {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  Reads reads;
  ReadMissing(ids, n, &reads);
  std::string scratch;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = Cached(ids[i]);
    const char* value = nullptr;
    versions[i] = 0;
    if (slot != kNone) {
      versions[i] = versions_[slot];
    } else if (StoredValue(ids[i], reads, &scratch, &value)) {
      std::memcpy(&versions[i], value, sizeof(int64_t));
    }
  }
  Unregister(reads);
}

int64_t DiskEmbeddingTable::Apply(const int64_t* ids, const float* grads, int64_t n,
                                  const float* lr_scales) {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  Reads reads;
  ReadMissing(ids, n, &reads);
  // Counted once the reads are in, so that applies_ numbers the applies in
  // the order they change rows.
  const int64_t updates = applies_++;  // Adam's t - 1: the applies before this one
  const int64_t dim = config_.dim;
  int64_t applied = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = Load(ids[i], reads);
    if (slot == kNone) {
      ++counts_.rows_dropped;
      continue;
    }
    sparse_internal::ApplyRegularizedRow(optimizer_, config_, Row(slot), grads + i * dim,
                                         lr_scales == nullptr ? 1.0f : lr_scales[i], updates);
    ++versions_[slot];
    dirty_[slot] = 1;
    MarkChanged(slot);
    lru_.Touch(slot);
    ++applied;
  }
  counts_.rows_applied += applied;
  FlushWrites();
  Unregister(reads);
  return applied;
}

EmbeddingTableStats DiskEmbeddingTable::Stats() const {
  MutexLock lock(mu_);
  EmbeddingTableStats stats = counts_;
  stats.rows_held = rows_held_;
  stats.bytes = static_cast<uint64_t>(rows_held_) * row_floats_ * sizeof(float);
  return stats;
}

DiskCacheStats DiskEmbeddingTable::cache_stats() const {
  MutexLock lock(mu_);
  DiskCacheStats stats = cache_counts_;
  stats.cached = used_;
  return stats;
}

EmbeddingRows DiskEmbeddingTable::Export() const {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  // Every row on disk, then the cached ones over them (a cached row may be
  // newer than its copy on disk): written nowhere, so Export stays const.
  std::map<int64_t, std::pair<int64_t, std::vector<float>>> rows;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice value = it->value();
    CHECK_EQ(value.size(), value_bytes_);
    int64_t version;
    std::memcpy(&version, value.data(), sizeof(int64_t));
    const float* row = reinterpret_cast<const float*>(value.data() + sizeof(int64_t));
    rows[DecodeKey(it->key())] = {version, std::vector<float>(row, row + row_floats_)};
  }
  CHECK(it->status().ok()) << TableMessage(config_, it->status().ToString());
  for (int32_t slot = 0; slot < used_; ++slot) {
    rows[keys_[slot]] = {versions_[slot], std::vector<float>(Row(slot), Row(slot) + row_floats_)};
  }
  const int64_t dim = config_.dim;
  EmbeddingRows out;
  for (const auto& [id, row] : rows) {
    out.ids.push_back(id);
    out.values.insert(out.values.end(), row.second.begin(), row.second.begin() + dim);
    out.slots.insert(out.slots.end(), row.second.begin() + dim, row.second.end());
    out.versions.push_back(row.first);
  }
  out.applies = applies_;
  return out;
}

Status DiskEmbeddingTable::Import(const EmbeddingRows& rows) {
  PST_RETURN_IF_ERROR(sparse_internal::CheckImport(config_, slot_floats_, rows));
  const int64_t n = static_cast<int64_t>(rows.ids.size());
  if (n > config_.capacity) {
    return DataLoss(TableMessage(config_, "cannot import rows: " + std::to_string(n) +
                                              " rows exceed the capacity " +
                                              std::to_string(config_.capacity)));
  }
  WriterMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  DropCache(/*flush=*/false);
  CloseDb();
  PST_RETURN_IF_ERROR(OpenDb(/*create=*/true));
  const int64_t dim = config_.dim;
  rocksdb::WriteBatch batch;
  std::string value(value_bytes_, '\0');
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(value.data(), &rows.versions[i], sizeof(int64_t));
    char* row = value.data() + sizeof(int64_t);
    std::memcpy(row, &rows.values[i * dim], dim * sizeof(float));
    if (slot_floats_ > 0) {
      std::memcpy(row + dim * sizeof(float), &rows.slots[i * slot_floats_],
                  slot_floats_ * sizeof(float));
    }
    batch.Put(EncodeKey(rows.ids[i]), value);
  }
  const rocksdb::Status s = db_->Write(NoWal(), &batch);
  if (!s.ok()) return Unavailable(TableMessage(config_, "importing rows: " + s.ToString()));
  rows_held_ = n;
  applies_ = rows.applies;
  counts_.rows_created = 0;  // since the restore
  if (sketch_ != nullptr) sketch_->Clear();
  return Status::OK();
}

StatusOr<int64_t> DiskEmbeddingTable::ListRows(int64_t cursor, int64_t max_rows,
                                               std::vector<int64_t>* ids,
                                               std::vector<float>* values) {
  if (cursor < 0 || max_rows < 1) {
    return InvalidArgument(TableMessage(config_, "cannot list rows from cursor " +
                                                     std::to_string(cursor) + ", " +
                                                     std::to_string(max_rows) + " at a time"));
  }
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  if (cursor == 0) {
    // The cached rows newer than their copies go to RocksDB first: the
    // iterator then sees every row as it is now.
    for (int32_t slot = 0; slot < used_; ++slot) WriteBack(slot);
    FlushWrites();
    listing_.reset(db_->NewIterator(rocksdb::ReadOptions()));
    listing_->SeekToFirst();
    listed_ = 0;
  } else if (listing_ == nullptr || cursor != listed_) {
    return FailedPrecondition(TableMessage(
        config_, "no listing stands at row " + std::to_string(cursor) + ": list again from 0"));
  }
  const int64_t dim = config_.dim;
  for (int64_t k = 0; k < max_rows && listing_->Valid(); ++k, listing_->Next(), ++listed_) {
    const rocksdb::Slice value = listing_->value();
    if (value.size() != value_bytes_) {
      listing_.reset();
      return DataLoss(TableMessage(config_, "a row in " + live_ + " has the wrong size"));
    }
    const float* row = reinterpret_cast<const float*>(value.data() + sizeof(int64_t));
    ids->push_back(DecodeKey(listing_->key()));
    values->insert(values->end(), row, row + dim);
  }
  if (listing_->Valid()) return listed_;
  const rocksdb::Status s = listing_->status();
  listing_.reset();
  if (!s.ok()) return Unavailable(TableMessage(config_, "listing " + live_ + ": " + s.ToString()));
  return int64_t{-1};
}

StatusOr<DynamicCut> DiskEmbeddingTable::CutChanged(bool with_values) {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  DynamicCut cut;
  if (!tracking_) {  // the first cut: tracking starts now
    tracking_ = true;
    std::fill(changed_.begin(), changed_.end(), 0);
    return cut;
  }
  std::vector<int64_t> keys = std::move(changed_keys_);
  changed_keys_.clear();
  for (int32_t slot = 0; slot < used_; ++slot) {
    if (changed_[slot]) keys.push_back(keys_[slot]);
    changed_[slot] = 0;
  }
  if (!with_values) return cut;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  // Their rows now: cached, or read from RocksDB (with mu_ let go of, as a
  // pull reads; a row changed meanwhile is in this cut as it is then, and
  // in the next one).
  Reads reads;
  ReadMissing(keys.data(), static_cast<int64_t>(keys.size()), &reads);
  std::string scratch;
  const int64_t dim = config_.dim;
  for (const int64_t key : keys) {
    const int32_t slot = Cached(key);
    const char* value = nullptr;
    const float* row = nullptr;
    if (slot != kNone) {
      row = Row(slot);
    } else if (StoredValue(key, reads, &scratch, &value)) {
      row = reinterpret_cast<const float*>(value + sizeof(int64_t));
    } else {
      continue;  // a table on disk removes no row; Import or a restore replaced them
    }
    cut.ids.push_back(key);
    cut.values.insert(cut.values.end(), row, row + dim);
  }
  Unregister(reads);
  return cut;
}

StatusOr<DiskCheckpointState> DiskEmbeddingTable::Checkpoint(const std::string& folder) {
  ReaderMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  for (int32_t slot = 0; slot < used_; ++slot) WriteBack(slot);
  FlushWrites();
  // Without a write-ahead log the memtable's rows are only in RAM: flush
  // them into SST files, which the checkpoint links.
  rocksdb::Status s = db_->Flush(rocksdb::FlushOptions());
  std::error_code error;
  fs::remove_all(folder, error);  // a checkpoint of the same name, taken again
  fs::create_directories(fs::path(folder).parent_path(), error);
  rocksdb::Checkpoint* checkpoint = nullptr;
  if (s.ok()) s = rocksdb::Checkpoint::Create(db_, &checkpoint);
  std::unique_ptr<rocksdb::Checkpoint> owned(checkpoint);
  if (s.ok()) s = checkpoint->CreateCheckpoint(folder);
  if (!s.ok()) {
    return Unavailable(
        TableMessage(config_, "cannot checkpoint into " + folder + ": " + s.ToString()));
  }
  return DiskCheckpointState{applies_, rows_held_};
}

Status DiskEmbeddingTable::RestoreCheckpoint(const std::string& folder,
                                             const DiskCheckpointState& state) {
  auto lost = [&](const std::string& what) {
    return DataLoss(TableMessage(config_, "checkpoint " + folder + ": " + what));
  };
  if (state.applies < 0 || state.rows_held < 0 || state.rows_held > config_.capacity) {
    return lost("impossible state (applies " + std::to_string(state.applies) + ", rows " +
                std::to_string(state.rows_held) + ", capacity " + std::to_string(config_.capacity) +
                ")");
  }
  WriterMutexLock db_lock(db_mu_);
  MutexLock lock(mu_);
  DropCache(/*flush=*/false);
  CloseDb();
  rows_held_ = 0;
  std::error_code error;
  fs::remove_all(live_, error);
  fs::create_directories(live_, error);
  if (error)
    return Unavailable(TableMessage(config_, "cannot create " + live_ + ": " + error.message()));
  if (!fs::is_directory(folder, error)) return lost("no such folder");
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const fs::path to = fs::path(live_) / entry.path().filename();
    if (entry.path().extension() == ".sst") {
      fs::create_hard_link(entry.path(), to, error);
      if (!error) continue;  // another file system: copy
    }
    fs::copy_file(entry.path(), to, error);
    if (error) return lost("cannot copy " + entry.path().string() + ": " + error.message());
  }
  if (error) return lost(error.message());
  Status opened = OpenDb(/*create=*/false);
  if (!opened.ok()) return lost(opened.message());
  rocksdb::Status s = db_->VerifyChecksum();
  int64_t rows = 0;
  if (s.ok()) {
    // Every value must be a row of this table: the optimizer or dim of
    // another run would be read as garbage.
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++rows) {
      if (it->key().size() != 8 || it->value().size() != value_bytes_) {
        s = rocksdb::Status::Corruption("a value of " + std::to_string(it->value().size()) +
                                        " bytes, not " + std::to_string(value_bytes_));
        break;
      }
    }
    if (s.ok()) s = it->status();
  }
  if (s.ok() && rows != state.rows_held) {
    s = rocksdb::Status::Corruption(std::to_string(rows) + " rows, the part says " +
                                    std::to_string(state.rows_held));
  }
  if (!s.ok()) {
    CloseDb();
    PST_RETURN_IF_ERROR(OpenDb(/*create=*/true));  // empty, as promised
    return lost(s.ToString());
  }
  rows_held_ = rows;
  applies_ = state.applies;
  counts_.rows_created = 0;  // since the restore
  if (sketch_ != nullptr) sketch_->Clear();
  return Status::OK();
}

}  // namespace pst
