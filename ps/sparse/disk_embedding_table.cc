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

// The RocksDB key of `key`: big-endian, sign bit flipped, so that the
// bytewise order of keys is the order of the signed ids.
std::string EncodeKey(int64_t key) {
  const uint64_t k = static_cast<uint64_t>(key) ^ kSignBit;
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>(k >> (56 - 8 * b));
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
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

rocksdb::WriteOptions NoWal() {
  rocksdb::WriteOptions w;
  w.disableWAL = true;
  return w;
}

}  // namespace

StatusOr<std::unique_ptr<DiskEmbeddingTable>> DiskEmbeddingTable::Open(
    const EmbeddingTableConfig& config, const Optimizer& optimizer) {
  CHECK_EQ(config.rows, 0);
  CHECK(!config.storage_dir.empty());
  CHECK_GT(config.cache_rows, 0);
  std::unique_ptr<DiskEmbeddingTable> table(
      new DiskEmbeddingTable(config, optimizer, FolderName(config)));
  MutexLock lock(table->mu_);
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
      lru_(cache_rows_) {
  if (config.min_count > 1) {
    sketch_ = std::make_unique<CountMinSketch>(DynamicEmbeddingTable::SketchWidth(config.capacity));
  }
}

DiskEmbeddingTable::~DiskEmbeddingTable() {
  MutexLock lock(mu_);
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
  }
  index_.clear();
  keys_.clear();
  versions_.clear();
  dirty_.clear();
  used_ = 0;
  lru_.Clear();
}

int32_t DiskEmbeddingTable::Cached(int64_t key) const {
  auto it = index_.find(key);
  return it == index_.end() ? kNone : it->second;
}

void DiskEmbeddingTable::WriteBack(int32_t slot) {
  if (!dirty_[slot]) return;
  std::string value(value_bytes_, '\0');
  std::memcpy(value.data(), &versions_[slot], sizeof(int64_t));
  std::memcpy(value.data() + sizeof(int64_t), Row(slot), row_floats_ * sizeof(float));
  const rocksdb::Status s = db_->Put(NoWal(), EncodeKey(keys_[slot]), value);
  CHECK(s.ok()) << TableMessage(config_, "writing a row to " + live_ + ": " + s.ToString());
  dirty_[slot] = 0;
  ++cache_counts_.writebacks;
}

int32_t DiskEmbeddingTable::TakeSlot(int64_t key) {
  int32_t slot;
  if (used_ < cache_rows_) {
    slot = used_++;
    keys_.push_back(key);
    versions_.push_back(0);
    dirty_.push_back(0);
  } else {
    slot = lru_.least_recent();
    WriteBack(slot);
    index_.erase(keys_[slot]);
    lru_.Remove(slot);
  }
  keys_[slot] = key;
  index_[key] = slot;
  lru_.PushFront(slot);
  return slot;
}

void DiskEmbeddingTable::Decode(const std::string& value, int32_t slot) {
  CHECK_EQ(value.size(), value_bytes_)
      << TableMessage(config_, "a row in " + live_ + " has the wrong size");
  std::memcpy(&versions_[slot], value.data(), sizeof(int64_t));
  std::memcpy(Row(slot), value.data() + sizeof(int64_t), row_floats_ * sizeof(float));
  dirty_[slot] = 0;
}

void DiskEmbeddingTable::ReadMissing(const int64_t* ids, int64_t n,
                                     std::unordered_map<int64_t, std::string>* found) const {
  std::vector<int64_t> missing;
  for (int64_t i = 0; i < n; ++i) {
    if (Cached(ids[i]) == kNone) missing.push_back(ids[i]);
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  cache_counts_.hits += n - static_cast<int64_t>(missing.size());
  cache_counts_.misses += static_cast<int64_t>(missing.size());
  if (missing.empty()) return;
  std::vector<std::string> encoded(missing.size());
  std::vector<rocksdb::Slice> keys(missing.size());
  for (size_t i = 0; i < missing.size(); ++i) {
    encoded[i] = EncodeKey(missing[i]);
    keys[i] = encoded[i];
  }
  std::vector<std::string> values;
  const std::vector<rocksdb::Status> statuses =
      db_->MultiGet(rocksdb::ReadOptions(), keys, &values);
  for (size_t i = 0; i < missing.size(); ++i) {
    if (statuses[i].IsNotFound()) continue;
    CHECK(statuses[i].ok()) << TableMessage(
        config_, "reading a row from " + live_ + ": " + statuses[i].ToString());
    found->emplace(missing[i], std::move(values[i]));
  }
}

int32_t DiskEmbeddingTable::Load(int64_t key, std::unordered_map<int64_t, std::string>* found) {
  int32_t slot = Cached(key);
  if (slot != kNone) return slot;
  auto it = found->find(key);
  if (it != found->end()) {
    slot = TakeSlot(key);
    Decode(it->second, slot);
    found->erase(it);
    return slot;
  }
  // Cached earlier in this call and evicted since (a call with more
  // distinct keys than the cache holds): written back, so in RocksDB.
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), EncodeKey(key), &value);
  if (s.IsNotFound()) return kNone;
  CHECK(s.ok()) << TableMessage(config_, "reading a row from " + live_ + ": " + s.ToString());
  slot = TakeSlot(key);
  Decode(value, slot);
  return slot;
}

Status DiskEmbeddingTable::CheckIds(const int64_t* ids, int64_t n) const {
  return sparse_internal::CheckIds(config_, ids, n);
}

void DiskEmbeddingTable::Pull(const int64_t* ids, int64_t n, float* rows, int64_t* versions) {
  MutexLock lock(mu_);
  std::unordered_map<int64_t, std::string> found;
  ReadMissing(ids, n, &found);
  const int64_t dim = config_.dim;
  for (int64_t i = 0; i < n; ++i) {
    float* out = rows + i * dim;
    int32_t slot = Load(ids[i], &found);
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
}

void DiskEmbeddingTable::Versions(const int64_t* ids, int64_t n, int64_t* versions) const {
  MutexLock lock(mu_);
  std::unordered_map<int64_t, std::string> found;
  ReadMissing(ids, n, &found);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = Cached(ids[i]);
    if (slot != kNone) {
      versions[i] = versions_[slot];
      continue;
    }
    auto it = found.find(ids[i]);
    versions[i] = 0;
    if (it != found.end()) std::memcpy(&versions[i], it->second.data(), sizeof(int64_t));
  }
}

int64_t DiskEmbeddingTable::Apply(const int64_t* ids, const float* grads, int64_t n,
                                  const float* lr_scales) {
  MutexLock lock(mu_);
  const int64_t updates = applies_++;  // Adam's t - 1: the applies before this one
  std::unordered_map<int64_t, std::string> found;
  ReadMissing(ids, n, &found);
  const int64_t dim = config_.dim;
  int64_t applied = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t slot = Load(ids[i], &found);
    if (slot == kNone) {
      ++counts_.rows_dropped;
      continue;
    }
    sparse_internal::ApplyRegularizedRow(optimizer_, config_, Row(slot), grads + i * dim,
                                         lr_scales == nullptr ? 1.0f : lr_scales[i], updates);
    ++versions_[slot];
    dirty_[slot] = 1;
    lru_.Touch(slot);
    ++applied;
  }
  counts_.rows_applied += applied;
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

StatusOr<DiskCheckpointState> DiskEmbeddingTable::Checkpoint(const std::string& folder) {
  MutexLock lock(mu_);
  for (int32_t slot = 0; slot < used_; ++slot) WriteBack(slot);
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
