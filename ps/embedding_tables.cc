#include "ps/embedding_tables.h"

#include <algorithm>
#include <limits>

#include "common/bfloat16.h"
#include "common/non_finite.h"
#include "ps/sparse/disk_embedding_table.h"

namespace pst {
namespace {

// The gradient's rows as float32: its own bytes, or bfloat16 widened into
// *scratch.
const float* RowsAsFloat32(const SparseGradient& g, std::vector<float>* scratch) {
  if (g.dtype == DType::kFloat32) return static_cast<const float*>(g.rows);
  const int64_t n = NumElements(g.rows_shape);
  scratch->resize(n);
  BFloat16ToFloat(static_cast<const uint16_t*>(g.rows), scratch->data(), n);
  return scratch->data();
}

template <typename T>
Tensor VectorTensor(DType dtype, const std::vector<T>& values, Shape shape) {
  Tensor t = Tensor::Uninitialized(dtype, std::move(shape));
  std::copy(values.begin(), values.end(), static_cast<T*>(t.data()));
  return t;
}

}  // namespace

std::string DescribeTable(const EmbeddingTableConfig& c) {
  const std::string dim = std::to_string(c.dim);
  if (c.rows > 0) {
    const int64_t local = (c.rows - c.shard + c.num_shards - 1) / c.num_shards;
    return "table '" + c.name + "' [" + std::to_string(c.rows) + " x " + dim + "], fixed, " +
           std::to_string(local) + " rows on this shard";
  }
  return "table '" + c.name + "' [dynamic x " + dim + "], up to " + std::to_string(c.capacity) +
         " rows on this shard" +
         (c.min_count > 1 ? ", admitted after " + std::to_string(c.min_count) + " sightings"
                          : std::string()) +
         (c.storage_dir.empty() ? std::string()
                                : ", on disk in " + c.storage_dir + " with " +
                                      std::to_string(c.cache_rows) + " rows cached in RAM");
}

Status EmbeddingTables::Initialize(const std::vector<EmbeddingTableConfig>& configs,
                                   const Optimizer& optimizer) {
  std::map<std::string, Table, std::less<>> tables;
  for (const EmbeddingTableConfig& config : configs) {
    PST_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddingTable> table,
                         EmbeddingTable::Create(config, optimizer));
    Table entry{std::move(table), std::make_unique<SparseAccumulator>(config.dim),
                config.rows > 0 ? std::make_unique<ChangedRows>(config) : nullptr};
    if (!tables.emplace(config.name, std::move(entry)).second) {
      return InvalidArgument("embedding table '" + config.name + "' given twice");
    }
  }
  tables_ = std::move(tables);
  return Status::OK();
}

StatusOr<EmbeddingTables::Table*> EmbeddingTables::Find(std::string_view name) const {
  auto it = tables_.find(name);
  if (it == tables_.end()) {
    return NotFound("no embedding table '" + std::string(name) + "' on this shard");
  }
  return const_cast<Table*>(&it->second);
}

Status EmbeddingTables::Pull(const std::vector<RowRequest>& requests, bool peek,
                             std::vector<PulledRows>* out) {
  std::vector<EmbeddingTable*> found;
  for (const RowRequest& r : requests) {
    PST_ASSIGN_OR_RETURN(Table * t, Find(r.table));
    PST_RETURN_IF_ERROR(t->table->CheckIds(r.ids, r.n));
    found.push_back(t->table.get());
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const RowRequest& r = requests[i];
    PulledRows pulled{std::string(r.table),
                      Tensor::Uninitialized(DType::kFloat32, {r.n, found[i]->dim()}),
                      Tensor::Uninitialized(DType::kInt64, {r.n})};
    if (peek) {
      found[i]->Peek(r.ids, r.n, pulled.rows.f32(), pulled.versions.i64());
    } else {
      found[i]->Pull(r.ids, r.n, pulled.rows.f32(), pulled.versions.i64());
    }
    out->push_back(std::move(pulled));
  }
  return Status::OK();
}

Status EmbeddingTables::Check(const std::vector<SparseGradient>& gradients) const {
  for (const SparseGradient& g : gradients) {
    PST_ASSIGN_OR_RETURN(Table * t, Find(g.table));
    const std::string where = "gradient for table '" + std::string(g.table) + "'";
    if (g.dtype != DType::kFloat32 && g.dtype != DType::kBFloat16) {
      return InvalidArgument(where + " must be float32 or bfloat16");
    }
    const Shape expected = {g.n, t->table->dim()};
    if (g.rows_shape != expected) {
      return InvalidArgument(where + " has rows " + ShapeToString(g.rows_shape) + " for " +
                             std::to_string(g.n) + " ids; expected " + ShapeToString(expected));
    }
    PST_RETURN_IF_ERROR(t->table->CheckIds(g.ids, g.n));
    const int64_t elements = NumElements(g.rows_shape);
    const int64_t bad = g.dtype == DType::kBFloat16
                            ? FirstNonFinite(static_cast<const uint16_t*>(g.rows), elements)
                            : FirstNonFinite(static_cast<const float*>(g.rows), elements);
    if (bad < elements) {
      const int64_t row = bad / t->table->dim();
      return InvalidArgument(where + " is not finite (row of id " + std::to_string(g.ids[row]) +
                             ", element " + std::to_string(bad % t->table->dim()) + ")");
    }
    for (int64_t i = 0; i < g.n; ++i) {
      if (g.versions[i] < 0 || g.versions[i] > std::numeric_limits<int64_t>::max() / 2) {
        return InvalidArgument(where + " has bad version " + std::to_string(g.versions[i]) +
                               " for id " + std::to_string(g.ids[i]));
      }
    }
  }
  return Status::OK();
}

SparseApplyCounts EmbeddingTables::Apply(const std::vector<SparseGradient>& gradients,
                                         const ShardConfig& config, float rate) {
  SparseApplyCounts counts;
  std::vector<float> widened, scales;
  std::vector<int64_t> now;
  for (const SparseGradient& g : gradients) {
    EmbeddingTable& table = *(*Find(g.table))->table;  // Check found it
    const float* rows = RowsAsFloat32(g, &widened);
    now.resize(g.n);
    table.Versions(g.ids, g.n, now.data());
    scales.assign(g.n, rate);
    // A rate of 0 (a schedule's floor) is no drop: drops are kept apart.
    std::vector<char> dropped(g.n, 0);
    bool any_dropped = false;
    for (int64_t i = 0; i < g.n; ++i) {
      const int64_t staleness = std::max<int64_t>(0, now[i] - g.versions[i]);
      counts.max_staleness = std::max(counts.max_staleness, staleness);
      if (config.staleness_policy == StalenessPolicy::kDrop && staleness > config.max_staleness) {
        dropped[i] = 1;
        any_dropped = true;
      } else if (config.staleness_policy == StalenessPolicy::kScale && staleness > 0) {
        scales[i] = rate / (1.0f + staleness);
        ++counts.scaled;
      }
    }
    // Dropped rows are left out rather than applied at scale 0: Adagrad's
    // and FTRL's accumulators would still grow.
    std::vector<int64_t> kept_ids;
    std::vector<float> kept_rows, kept_scales;
    const int64_t dim = table.dim();
    if (any_dropped) {
      for (int64_t i = 0; i < g.n; ++i) {
        if (dropped[i]) {
          ++counts.dropped;
          continue;
        }
        kept_ids.push_back(g.ids[i]);
        kept_rows.insert(kept_rows.end(), rows + i * dim, rows + (i + 1) * dim);
        kept_scales.push_back(scales[i]);
      }
    }
    const int64_t n = any_dropped ? static_cast<int64_t>(kept_ids.size()) : g.n;
    const int64_t applied =
        any_dropped ? table.Apply(kept_ids.data(), kept_rows.data(), n, kept_scales.data())
                    : table.Apply(g.ids, rows, n, scales.data());
    if (ChangedRows* changed = (*Find(g.table))->changed.get()) {
      changed->Mark(any_dropped ? kept_ids.data() : g.ids, n);
    }
    counts.applied += static_cast<uint32_t>(applied);
    counts.dropped += static_cast<uint32_t>(n - applied);
  }
  return counts;
}

void EmbeddingTables::Accumulate(const std::vector<SparseGradient>& gradients) {
  std::vector<float> widened;
  for (const SparseGradient& g : gradients) {
    (*Find(g.table))->accumulator->Add(g.ids, RowsAsFloat32(g, &widened), g.n);
  }
}

uint32_t EmbeddingTables::ApplyAccumulated(int gradients, float rate) {
  uint32_t applied = 0;
  std::vector<int64_t> ids;
  std::vector<float> rows, scales;
  for (auto& [name, t] : tables_) {
    t.accumulator->TakeMean(gradients, &ids, &rows);
    if (!ids.empty()) {
      scales.assign(ids.size(), rate);
      applied += static_cast<uint32_t>(
          t.table->Apply(ids.data(), rows.data(), static_cast<int64_t>(ids.size()), scales.data()));
      if (t.changed) t.changed->Mark(ids.data(), static_cast<int64_t>(ids.size()));
    }
  }
  return applied;
}

Status EmbeddingTables::CutChangedRows(bool with_values, std::vector<CutRows>* out) {
  for (auto& [name, t] : tables_) {
    const int64_t dim = t.table->dim();
    if (t.table->dynamic()) {
      PST_ASSIGN_OR_RETURN(DynamicCut cut, t.table->CutChanged(with_values));
      if (!with_values) continue;
      const int64_t n = static_cast<int64_t>(cut.ids.size());
      out->push_back(
          {name, VectorTensor(DType::kInt64, cut.ids, {n}),
           VectorTensor(DType::kFloat32, cut.values, {n, dim}),
           VectorTensor(DType::kInt64, cut.removed, {static_cast<int64_t>(cut.removed.size())})});
      continue;
    }
    const std::vector<int64_t> ids = t.changed->Cut();
    if (!with_values) continue;
    const int64_t n = static_cast<int64_t>(ids.size());
    CutRows cut{name, VectorTensor(DType::kInt64, ids, {n}),
                Tensor::Uninitialized(DType::kFloat32, {n, dim}), Tensor(DType::kInt64, {0})};
    std::vector<int64_t> versions(ids.size());
    t.table->Pull(ids.data(), n, cut.rows.f32(), versions.data());
    out->push_back(std::move(cut));
  }
  return Status::OK();
}

StatusOr<ListedRows> EmbeddingTables::ListRows(std::string_view table, int64_t cursor,
                                               int64_t max_rows) {
  PST_ASSIGN_OR_RETURN(Table * t, Find(table));
  std::vector<int64_t> ids;
  std::vector<float> values;
  PST_ASSIGN_OR_RETURN(const int64_t next, t->table->ListRows(cursor, max_rows, &ids, &values));
  const int64_t n = static_cast<int64_t>(ids.size());
  return ListedRows{VectorTensor(DType::kInt64, ids, {n}),
                    VectorTensor(DType::kFloat32, values, {n, t->table->dim()}), next};
}

void EmbeddingTables::ClearAccumulators() {
  for (auto& [name, t] : tables_) t.accumulator->Clear();
}

std::string EmbeddingTables::DiskFolder(const std::string& part_path, const std::string& table) {
  std::string stem = part_path;
  constexpr std::string_view kPart = ".part";
  if (stem.size() >= kPart.size() &&
      stem.compare(stem.size() - kPart.size(), kPart.size(), kPart) == 0) {
    stem.resize(stem.size() - kPart.size());
  }
  std::string name = table;
  std::replace(name.begin(), name.end(), '/', '_');
  return stem + "." + name + ".rocksdb";
}

Status EmbeddingTables::Snapshot(NamedTensors* out, const std::string& part_path) const {
  for (const auto& [name, t] : tables_) {
    if (auto* disk = dynamic_cast<DiskEmbeddingTable*>(t.table.get())) {
      if (part_path.empty()) {
        return FailedPrecondition("table '" + name +
                                  "' is on disk: only a checkpoint part can hold it");
      }
      PST_ASSIGN_OR_RETURN(DiskCheckpointState state,
                           disk->Checkpoint(DiskFolder(part_path, name)));
      out->emplace_back(name + "@applies", ScalarI64(state.applies));
      out->emplace_back(name + "@disk_rows", ScalarI64(state.rows_held));
      continue;
    }
    EmbeddingRows rows = t.table->Export();
    const int64_t n = static_cast<int64_t>(rows.ids.size());
    const int64_t dim = t.table->dim();
    const int64_t slot_floats = n == 0 ? 0 : static_cast<int64_t>(rows.slots.size()) / n;
    out->emplace_back(name + "@ids", VectorTensor(DType::kInt64, rows.ids, {n}));
    out->emplace_back(name + "@rows", VectorTensor(DType::kFloat32, rows.values, {n, dim}));
    out->emplace_back(name + "@slots", VectorTensor(DType::kFloat32, rows.slots, {n, slot_floats}));
    out->emplace_back(name + "@row_versions", VectorTensor(DType::kInt64, rows.versions, {n}));
    out->emplace_back(name + "@applies", ScalarI64(rows.applies));
  }
  return Status::OK();
}

Status EmbeddingTables::Restore(const std::map<std::string, const Tensor*, std::less<>>& by_name,
                                const std::string& part_path) {
  auto get = [&](const std::string& name, DType dtype, size_t rank) -> StatusOr<const Tensor*> {
    auto it = by_name.find(name);
    if (it == by_name.end()) return DataLoss("checkpoint part has no '" + name + "'");
    if (it->second->dtype() != dtype || it->second->shape().size() != rank) {
      return DataLoss("checkpoint part's '" + name + "' is " + DTypeName(it->second->dtype()) +
                      ShapeToString(it->second->shape()));
    }
    return it->second;
  };
  std::vector<std::pair<EmbeddingTable*, EmbeddingRows>> loaded;
  std::vector<std::pair<DiskEmbeddingTable*, DiskCheckpointState>> on_disk;
  for (const auto& [name, t] : tables_) {
    if (auto* disk = dynamic_cast<DiskEmbeddingTable*>(t.table.get())) {
      if (part_path.empty()) {
        return FailedPrecondition("table '" + name + "' is on disk: only a checkpoint restores it");
      }
      PST_ASSIGN_OR_RETURN(const Tensor* applies, get(name + "@applies", DType::kInt64, 0));
      auto rows = by_name.find(name + "@disk_rows");
      if (rows == by_name.end()) {
        return DataLoss("table '" + name +
                        "' is on disk (--embedding_storage=disk) but the checkpoint part holds "
                        "it in RAM's format: restore it with --embedding_storage=ram");
      }
      PST_ASSIGN_OR_RETURN(const Tensor* held, get(name + "@disk_rows", DType::kInt64, 0));
      on_disk.emplace_back(disk, DiskCheckpointState{applies->i64()[0], held->i64()[0]});
      continue;
    }
    if (by_name.count(name + "@disk_rows") > 0) {
      return DataLoss("table '" + name +
                      "' is in RAM but the checkpoint part holds it on disk: restore it with "
                      "--embedding_storage=disk:DIR");
    }
    PST_ASSIGN_OR_RETURN(const Tensor* ids, get(name + "@ids", DType::kInt64, 1));
    PST_ASSIGN_OR_RETURN(const Tensor* values, get(name + "@rows", DType::kFloat32, 2));
    PST_ASSIGN_OR_RETURN(const Tensor* slots, get(name + "@slots", DType::kFloat32, 2));
    PST_ASSIGN_OR_RETURN(const Tensor* versions, get(name + "@row_versions", DType::kInt64, 1));
    PST_ASSIGN_OR_RETURN(const Tensor* applies, get(name + "@applies", DType::kInt64, 0));
    const int64_t n = ids->num_elements();
    if (values->shape()[0] != n || slots->shape()[0] != n || versions->num_elements() != n) {
      return DataLoss("checkpoint part's rows of table '" + name + "' disagree in number");
    }
    EmbeddingRows rows;
    rows.ids.assign(ids->i64(), ids->i64() + n);
    rows.values.assign(values->f32(), values->f32() + values->num_elements());
    rows.slots.assign(slots->f32(), slots->f32() + slots->num_elements());
    rows.versions.assign(versions->i64(), versions->i64() + n);
    rows.applies = applies->i64()[0];
    loaded.emplace_back(t.table.get(), std::move(rows));
  }
  // Import checks a table's rows before changing it. With several tables a
  // later refusal leaves the earlier ones restored and the error goes back
  // to the chief, which then restores an older checkpoint (every table).
  for (auto& [table, rows] : loaded) PST_RETURN_IF_ERROR(table->Import(rows));
  for (auto& [table, state] : on_disk) {
    PST_RETURN_IF_ERROR(
        table->RestoreCheckpoint(DiskFolder(part_path, table->config().name), state));
  }
  ClearAccumulators();
  return Status::OK();
}

std::vector<TableLoad> EmbeddingTables::Stats() const {
  std::vector<TableLoad> loads;
  for (const auto& [name, t] : tables_) loads.push_back({name, t.table->Stats()});
  return loads;
}

uint64_t EmbeddingTables::bytes() const {
  uint64_t total = 0;
  for (const auto& [name, t] : tables_) total += t.table->Stats().bytes;
  return total;
}

}  // namespace pst
