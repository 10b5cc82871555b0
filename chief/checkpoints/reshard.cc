#include "chief/checkpoints/reshard.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

namespace pst {
namespace {

using PartIndex = std::map<std::string, const Tensor*, std::less<>>;

constexpr char kSyncStepName[] = "@sync_step";
constexpr char kSlotInfix[] = "@slot/";

// The tensor `name` of old part `shard`, of `dtype` and (unless null) `shape`.
StatusOr<const Tensor*> Find(const PartIndex& part, int shard, const std::string& name, DType dtype,
                             const Shape* shape) {
  const std::string where = "checkpoint part ps-" + std::to_string(shard);
  auto it = part.find(name);
  if (it == part.end()) return DataLoss(where + " has no '" + name + "'");
  const Tensor& t = *it->second;
  if (t.dtype() != dtype || (shape != nullptr && t.shape() != *shape)) {
    return DataLoss(where + " holds '" + name + "' as " + DTypeName(t.dtype()) +
                    ShapeToString(t.shape()) + ", not " + DTypeName(dtype) +
                    (shape != nullptr ? ShapeToString(*shape) : ""));
  }
  return &t;
}

// An int64 scalar that only counts up (a version, a step).
StatusOr<int64_t> FindCount(const PartIndex& part, int shard, const std::string& name) {
  const Shape scalar;
  PST_ASSIGN_OR_RETURN(const Tensor* t, Find(part, shard, name, DType::kInt64, &scalar));
  if (t->i64()[0] < 0)
    return DataLoss("checkpoint part ps-" + std::to_string(shard) + "'s '" + name +
                    "' is negative");
  return t->i64()[0];
}

// The suffixes of a slice's tensors shaped like it: "" (its value) and one
// "@slot/<name>" per optimizer slot the part holds for it.
std::vector<std::string> ValueSuffixes(const PartIndex& part, const std::string& slice) {
  std::vector<std::string> suffixes = {""};
  const std::string prefix = slice + kSlotInfix;
  for (auto it = part.lower_bound(prefix); it != part.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    suffixes.push_back(it->first.substr(slice.size()));
  }
  return suffixes;
}

bool Overlap(const Slice& a, const Slice& b) {
  return a.row_begin < b.row_end && b.row_begin < a.row_end;
}

// Variable `v`'s value, slots and counts, from its slices under `from` into
// its slices under `to`.
Status ReshardVariable(const std::vector<PartIndex>& parts, const Placement& from,
                       const Placement& to, int v, std::vector<NamedTensors>* out) {
  const VariableSpec& spec = from.variables()[v];
  const Slice& first = from.slices()[from.SlicesOfVariable(v).front()];
  const std::vector<std::string> suffixes = ValueSuffixes(parts[first.shard], first.name);
  std::vector<Tensor> whole;  // one per suffix
  for (const std::string& suffix : suffixes) {
    Tensor full = Tensor::Uninitialized(spec.dtype, spec.shape);
    for (int i : from.SlicesOfVariable(v)) {
      const Slice& s = from.slices()[i];
      PST_ASSIGN_OR_RETURN(const Tensor* t,
                           Find(parts[s.shard], s.shard, s.name + suffix, spec.dtype, &s.shape));
      CopyRowsInto(s, t->data(), &full);
    }
    whole.push_back(std::move(full));
  }
  for (int j : to.SlicesOfVariable(v)) {
    const Slice& n = to.slices()[j];
    int64_t version = 0, updates = 0;
    for (int i : from.SlicesOfVariable(v)) {
      const Slice& s = from.slices()[i];
      if (!Overlap(s, n)) continue;
      PST_ASSIGN_OR_RETURN(int64_t old_version,
                           FindCount(parts[s.shard], s.shard, s.name + "@version"));
      PST_ASSIGN_OR_RETURN(int64_t old_updates,
                           FindCount(parts[s.shard], s.shard, s.name + "@updates"));
      version = std::max(version, old_version);
      updates = std::max(updates, old_updates);
    }
    NamedTensors& part = (*out)[n.shard];
    part.emplace_back(n.name, ExtractRows(n, whole[0]));
    part.emplace_back(n.name + "@version", ScalarI64(version));
    part.emplace_back(n.name + "@updates", ScalarI64(updates));
    for (size_t k = 1; k < suffixes.size(); ++k) {
      part.emplace_back(n.name + suffixes[k], ExtractRows(n, whole[k]));
    }
  }
  return Status::OK();
}

// One old part's rows of a table.
struct TablePart {
  const Tensor* ids;
  const Tensor* rows;
  const Tensor* slots;
  const Tensor* versions;
};

StatusOr<TablePart> FindTablePart(const PartIndex& part, int shard, const EmbeddingTableSpec& t) {
  TablePart p;
  const std::string where = "checkpoint part ps-" + std::to_string(shard) + "'s '" + t.name;
  PST_ASSIGN_OR_RETURN(p.ids, Find(part, shard, t.name + "@ids", DType::kInt64, nullptr));
  if (p.ids->shape().size() != 1) {
    return DataLoss(where + "@ids' is " + ShapeToString(p.ids->shape()) + ", not a vector");
  }
  const int64_t n = p.ids->shape()[0];
  const Shape vector = {n}, rows = {n, t.dim};
  PST_ASSIGN_OR_RETURN(p.rows, Find(part, shard, t.name + "@rows", DType::kFloat32, &rows));
  PST_ASSIGN_OR_RETURN(p.slots, Find(part, shard, t.name + "@slots", DType::kFloat32, nullptr));
  PST_ASSIGN_OR_RETURN(p.versions,
                       Find(part, shard, t.name + "@row_versions", DType::kInt64, &vector));
  if (p.slots->shape().size() != 2 || p.slots->shape()[0] != n) {
    return DataLoss(where + "@slots' is " + ShapeToString(p.slots->shape()) + " for " +
                    std::to_string(n) + " rows");
  }
  return p;
}

// Table `t`'s rows, from every old part to the part of id mod to_shards.
Status ReshardTable(const std::vector<PartIndex>& parts, const EmbeddingTableSpec& t, int to_shards,
                    std::vector<NamedTensors>* out) {
  struct Row {
    int64_t id;
    int part;
    int64_t index;
  };
  std::vector<TablePart> old;
  std::vector<Row> rows;
  int64_t applies = 0, slot_floats = 0;
  for (int k = 0; k < static_cast<int>(parts.size()); ++k) {
    // A table on disk (--embedding_storage=disk) has its rows in each ps's
    // RocksDB checkpoint, not in the parts: they cannot be redistributed.
    if (parts[k].count(t.name + "@disk_rows") > 0) {
      return FailedPrecondition(
          "table '" + t.name +
          "' is stored on disk (--embedding_storage=disk): its checkpoint "
          "cannot be resharded; restore it with the number of ps that wrote it (" +
          std::to_string(parts.size()) + ")");
    }
    PST_ASSIGN_OR_RETURN(TablePart p, FindTablePart(parts[k], k, t));
    PST_ASSIGN_OR_RETURN(int64_t part_applies, FindCount(parts[k], k, t.name + "@applies"));
    applies = std::max(applies, part_applies);
    const int64_t n = p.ids->shape()[0];
    if (n > 0 && slot_floats > 0 && p.slots->shape()[1] != slot_floats) {
      return DataLoss("checkpoint parts disagree on the slots of table '" + t.name + "' rows");
    }
    if (n > 0) slot_floats = p.slots->shape()[1];
    for (int64_t i = 0; i < n; ++i) rows.push_back({p.ids->i64()[i], k, i});
    old.push_back(p);
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.id < b.id; });
  std::vector<int64_t> counts(to_shards, 0);
  auto shard_of = [to_shards](int64_t id) {  // as the ps: unsigned modulo
    return static_cast<int>(static_cast<uint64_t>(id) % static_cast<uint64_t>(to_shards));
  };
  for (const Row& r : rows) ++counts[shard_of(r.id)];
  for (int k = 0; k < to_shards; ++k) {
    const int64_t n = counts[k];
    Tensor ids = Tensor::Uninitialized(DType::kInt64, {n});
    Tensor values = Tensor::Uninitialized(DType::kFloat32, {n, t.dim});
    Tensor slots = Tensor::Uninitialized(DType::kFloat32, {n, slot_floats});
    Tensor versions = Tensor::Uninitialized(DType::kInt64, {n});
    int64_t i = 0;
    for (const Row& r : rows) {
      if (shard_of(r.id) != k) continue;
      const TablePart& p = old[r.part];
      ids.i64()[i] = r.id;
      versions.i64()[i] = p.versions->i64()[r.index];
      std::memcpy(values.f32() + i * t.dim, p.rows->f32() + r.index * t.dim, t.dim * sizeof(float));
      std::memcpy(slots.f32() + i * slot_floats, p.slots->f32() + r.index * slot_floats,
                  slot_floats * sizeof(float));
      ++i;
    }
    NamedTensors& part = (*out)[k];
    part.emplace_back(t.name + "@ids", std::move(ids));
    part.emplace_back(t.name + "@rows", std::move(values));
    part.emplace_back(t.name + "@slots", std::move(slots));
    part.emplace_back(t.name + "@row_versions", std::move(versions));
    part.emplace_back(t.name + "@applies", ScalarI64(applies));
  }
  return Status::OK();
}

bool SameModel(const Placement& a, const Placement& b) {
  if (a.variables().size() != b.variables().size() || a.tables().size() != b.tables().size()) {
    return false;
  }
  for (size_t i = 0; i < a.variables().size(); ++i) {
    const VariableSpec &x = a.variables()[i], &y = b.variables()[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape) return false;
  }
  for (size_t i = 0; i < a.tables().size(); ++i) {
    const EmbeddingTableSpec &x = a.tables()[i], &y = b.tables()[i];
    if (x.name != y.name || x.dim != y.dim || x.rows != y.rows) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::vector<NamedTensors>> ReshardParts(const std::vector<NamedTensors>& parts,
                                                 const Placement& from, const Placement& to) {
  if (static_cast<int>(parts.size()) != from.num_shards()) {
    return InvalidArgument("resharding needs " + std::to_string(from.num_shards()) +
                           " parts, got " + std::to_string(parts.size()));
  }
  if (!SameModel(from, to)) {
    return InvalidArgument("resharding needs the same variables and tables on both sides");
  }
  std::vector<PartIndex> index(parts.size());
  for (size_t k = 0; k < parts.size(); ++k) {
    for (const auto& [name, t] : parts[k]) index[k][name] = &t;
  }
  std::vector<NamedTensors> out(to.num_shards());
  for (int v = 0; v < static_cast<int>(from.variables().size()); ++v) {
    PST_RETURN_IF_ERROR(ReshardVariable(index, from, to, v, &out));
  }
  for (const EmbeddingTableSpec& t : from.tables()) {
    PST_RETURN_IF_ERROR(ReshardTable(index, t, to.num_shards(), &out));
  }
  int64_t sync_step = 0;
  for (int k = 0; k < static_cast<int>(parts.size()); ++k) {
    PST_ASSIGN_OR_RETURN(int64_t step, FindCount(index[k], k, kSyncStepName));
    sync_step = std::max(sync_step, step);
  }
  for (NamedTensors& part : out) part.emplace_back(kSyncStepName, ScalarI64(sync_step));
  return out;
}

}  // namespace pst
