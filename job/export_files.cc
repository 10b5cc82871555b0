#include "job/export_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "common/tensor_file.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

constexpr char kBasePrefix[] = "base-";
constexpr char kDeltaPrefix[] = "delta-";
constexpr char kSuffix[] = ".bin";
constexpr char kDeltaBase[] = "@delta/base";
constexpr char kDeltaPrevious[] = "@delta/previous";

std::string StepFileName(const char* prefix, int64_t step) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%012lld%s", prefix, static_cast<long long>(step), kSuffix);
  return name;
}

// The step in a name "<prefix><digits>.bin"; nullopt for another name.
std::optional<int64_t> StepOf(const std::string& name, const std::string& prefix) {
  const std::string suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoll(digits);
}

}  // namespace

StatusOr<ExportFiles> ListExports(const std::string& dir) {
  ExportFiles files;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  if (error) {
    if (error == std::errc::no_such_file_or_directory) return files;
    return Unavailable("cannot list export folder " + dir + ": " + error.message());
  }
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (auto step = StepOf(name, kBasePrefix)) files.bases[*step] = entry.path().string();
    if (auto step = StepOf(name, kDeltaPrefix)) files.deltas[*step] = entry.path().string();
  }
  return files;
}

namespace {

int64_t ScalarIn(const std::map<std::string, const Tensor*>& entries, const std::string& name) {
  auto it = entries.find(name);
  if (it == entries.end() || it->second->dtype() != DType::kInt64 ||
      it->second->num_elements() != 1) {
    return -1;
  }
  return it->second->i64()[0];
}

// One table's rows in a delta: ids (a fixed table's rows, a dynamic one's
// keys), their values, and a dynamic table's keys evicted (or null).
struct DeltaRows {
  size_t param;
  const Tensor* ids;
  const Tensor* rows;
  const Tensor* removed;
};

// DataLoss naming the file and table unless `r` fits table `table` of
// *model (dtypes, shapes; a fixed table's ids in range).
Status CheckDeltaRows(const std::string& path, const std::string& table, const ExportedModel& model,
                      const DeltaRows& r) {
  const Tensor& whole = model.trained.params[r.param];
  const int64_t n = r.ids->num_elements();
  if (r.ids->dtype() != DType::kInt64 || r.rows->dtype() != DType::kFloat32 ||
      r.rows->shape() != Shape{n, whole.shape()[1]}) {
    return DataLoss(path + ": the rows of '" + table + "' are " + ShapeToString(r.rows->shape()) +
                    " for " + std::to_string(n) + " ids of a table of dim " +
                    std::to_string(whole.shape()[1]));
  }
  const bool dynamic = model.trained.table_rows == 0;
  if (r.removed != nullptr && (!dynamic || r.removed->dtype() != DType::kInt64)) {
    return DataLoss(path + ": removed keys of '" + table + "', which is no dynamic table");
  }
  for (int64_t i = 0; !dynamic && i < n; ++i) {
    if (r.ids->i64()[i] < 0 || r.ids->i64()[i] >= whole.shape()[0]) {
      return DataLoss(path + ": row " + std::to_string(r.ids->i64()[i]) + " of '" + table +
                      "' is out of range [0, " + std::to_string(whole.shape()[0]) + ")");
    }
  }
  return Status::OK();
}

// A fixed table with the delta's rows written over it (a copy: the tensor
// may be shared with a model handed out before).
Tensor WithFixedRows(const Tensor& table, const DeltaRows& r) {
  Tensor out = table.Clone();
  const int64_t dim = out.shape()[1];
  for (int64_t i = 0; i < r.ids->num_elements(); ++i) {
    std::copy(r.rows->f32() + i * dim, r.rows->f32() + (i + 1) * dim,
              out.f32() + r.ids->i64()[i] * dim);
  }
  return out;
}

// A dynamic table (ascending `keys`, `values`) without the delta's removed
// keys and with its rows (new keys added, held ones overwritten): new
// tensors into *keys and *values, one pass over the table.
void MergeDynamicRows(const DeltaRows& r, Tensor* keys, Tensor* values) {
  const int64_t dim = values->shape()[1];
  std::vector<int64_t> removed;
  if (r.removed != nullptr) {
    removed.assign(r.removed->i64(), r.removed->i64() + r.removed->num_elements());
  }
  std::sort(removed.begin(), removed.end());
  // The delta's rows by key; of a key given twice, the later row.
  std::vector<std::pair<int64_t, int64_t>> changed;  // (key, row in the delta)
  for (int64_t i = 0; i < r.ids->num_elements(); ++i) changed.emplace_back(r.ids->i64()[i], i);
  std::stable_sort(changed.begin(), changed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> out_keys;
  std::vector<const float*> out_rows;
  const int64_t held = keys->num_elements();
  int64_t h = 0;
  for (size_t c = 0; h < held || c < changed.size();) {
    const bool take_changed =
        c < changed.size() && (h == held || changed[c].first <= keys->i64()[h]);
    if (take_changed) {
      const int64_t key = changed[c].first;
      while (c + 1 < changed.size() && changed[c + 1].first == key) ++c;
      if (h < held && keys->i64()[h] == key) ++h;  // overwritten
      out_keys.push_back(key);
      out_rows.push_back(r.rows->f32() + changed[c].second * dim);
      ++c;
      continue;
    }
    const int64_t key = keys->i64()[h];
    if (!std::binary_search(removed.begin(), removed.end(), key)) {
      out_keys.push_back(key);
      out_rows.push_back(values->f32() + h * dim);
    }
    ++h;
  }
  const int64_t n = static_cast<int64_t>(out_keys.size());
  Tensor merged_keys = Tensor::Uninitialized(DType::kInt64, {n});
  Tensor merged_values = Tensor::Uninitialized(DType::kFloat32, {n, dim});
  for (int64_t i = 0; i < n; ++i) {
    merged_keys.i64()[i] = out_keys[i];
    std::copy(out_rows[i], out_rows[i] + dim, merged_values.f32() + i * dim);
  }
  *keys = std::move(merged_keys);
  *values = std::move(merged_values);
}

// Applies delta `path` (its entries `tensors`) to *model, whose export is
// the one the delta follows. Every entry is checked before any is applied.
Status ApplyDelta(const std::string& path, const NamedTensors& tensors, ExportedModel* model) {
  std::map<std::string, const Tensor*> entries;
  for (const auto& [name, t] : tensors) entries[name] = &t;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < model->param_names.size(); ++i) index[model->param_names[i]] = i;
  std::vector<std::pair<size_t, const Tensor*>> dense;
  std::vector<DeltaRows> rows;
  for (const auto& [name, t] : entries) {
    if (name.rfind("@delta/", 0) == 0) continue;
    const size_t at = name.find("@ids");
    if (at != std::string::npos && at + 4 == name.size()) {
      const std::string table = name.substr(0, at);
      auto param = index.find(table);
      auto values = entries.find(table + "@rows");
      if (param == index.end() || values == entries.end()) {
        return DataLoss(path + ": rows of '" + table + "', which the model does not have");
      }
      auto removed = entries.find(table + "@removed");
      rows.push_back(
          {param->second, t, values->second, removed == entries.end() ? nullptr : removed->second});
      PST_RETURN_IF_ERROR(CheckDeltaRows(path, table, *model, rows.back()));
      continue;
    }
    if (name.find('@') != std::string::npos) continue;  // a table's rows, found with its ids
    auto param = index.find(name);
    if (param == index.end()) {
      return DataLoss(path + ": variable '" + name + "', which the model does not have");
    }
    const Tensor& now = model->trained.params[param->second];
    if (t->dtype() != now.dtype() || t->shape() != now.shape()) {
      return DataLoss(path + ": '" + name + "' is " + ShapeToString(t->shape()) + ", the model's " +
                      ShapeToString(now.shape()));
    }
    dense.emplace_back(param->second, t);
  }
  for (const auto& [param, t] : dense) model->trained.params[param] = *t;
  const size_t tables_from = model->param_names.size() - model->trained.dynamic.keys.size();
  for (const DeltaRows& r : rows) {
    Tensor& table = model->trained.params[r.param];
    if (model->trained.table_rows == 0) {
      MergeDynamicRows(r, &model->trained.dynamic.keys[r.param - tables_from], &table);
    } else {
      table = WithFixedRows(table, r);
    }
  }
  return Status::OK();
}

// Applies to *model the deltas of its base in `files` above its step and
// at most `max_step`, in order.
Status ApplyDeltas(const ExportFiles& files, int64_t max_step, ExportedModel* model) {
  for (auto it = files.deltas.upper_bound(model->step);
       it != files.deltas.end() && it->first <= max_step; ++it) {
    PST_ASSIGN_OR_RETURN(NamedTensors tensors, ReadTensorFile(it->second));
    std::map<std::string, const Tensor*> entries;
    for (const auto& [name, t] : tensors) entries[name] = &t;
    if (ScalarIn(entries, kDeltaBase) != model->base_step) continue;  // another base's
    const int64_t previous = ScalarIn(entries, kDeltaPrevious);
    if (previous != model->step) {
      return DataLoss(it->second + " follows the export at step " + std::to_string(previous) +
                      ", which is missing (the model is at step " + std::to_string(model->step) +
                      ")");
    }
    PST_RETURN_IF_ERROR(ApplyDelta(it->second, tensors, model));
    model->step = it->first;
    ++model->deltas;
  }
  return Status::OK();
}

StatusOr<ExportedModel> LoadBase(const std::string& path, int64_t step) {
  ExportedModel model;
  PST_ASSIGN_OR_RETURN(model.trained, ReadModelFile(path));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> built, MakeTrainedModel(model.trained));
  for (const VariableSpec& v : built->variables()) model.param_names.push_back(v.name);
  for (const EmbeddingTableSpec& t : built->tables()) model.param_names.push_back(t.name);
  if (model.param_names.size() != model.trained.params.size()) {
    return DataLoss(path + " holds " + std::to_string(model.trained.params.size()) +
                    " tensors for a model of " + std::to_string(model.param_names.size()));
  }
  model.step = model.base_step = step;
  return model;
}

}  // namespace

std::string BaseFileName(int64_t step) { return StepFileName(kBasePrefix, step); }
std::string DeltaFileName(int64_t step) { return StepFileName(kDeltaPrefix, step); }

Status WriteDeltaFile(const std::string& path, int64_t base_step, int64_t previous_step,
                      const NamedTensors& variables, const std::vector<ChangedTableRows>& tables) {
  NamedTensors tensors = variables;
  for (const ChangedTableRows& t : tables) {
    tensors.emplace_back(t.table + "@ids", t.ids);
    tensors.emplace_back(t.table + "@rows", t.rows);
    if (!t.removed.empty() && t.removed.num_elements() > 0) {
      tensors.emplace_back(t.table + "@removed", t.removed);
    }
  }
  tensors.emplace_back(kDeltaBase, ScalarI64(base_step));
  tensors.emplace_back(kDeltaPrevious, ScalarI64(previous_step));
  return WriteTensorFile(path, tensors).status();
}

StatusOr<ExportedModel> LoadExport(const std::string& dir, int64_t max_step) {
  PST_ASSIGN_OR_RETURN(const ExportFiles files, ListExports(dir));
  auto base = files.bases.upper_bound(max_step);
  if (base == files.bases.begin()) {
    return NotFound("no exported model in " + dir +
                    (max_step == std::numeric_limits<int64_t>::max()
                         ? std::string()
                         : " at or before step " + std::to_string(max_step)));
  }
  --base;
  PST_ASSIGN_OR_RETURN(ExportedModel model, LoadBase(base->second, base->first));
  PST_RETURN_IF_ERROR(ApplyDeltas(files, max_step, &model));
  return model;
}

Status UpdateExport(const std::string& dir, ExportedModel* current, bool* changed) {
  *changed = false;
  PST_ASSIGN_OR_RETURN(const ExportFiles files, ListExports(dir));
  // Another newest base: a newer one, or an older one after the chief
  // removed exports of a history a rollback undid.
  const bool other_base = !files.bases.empty() && files.bases.rbegin()->first != current->base_step;
  if (current->param_names.empty() || other_base) {
    PST_ASSIGN_OR_RETURN(*current, LoadExport(dir));
    *changed = true;
    return Status::OK();
  }
  ExportedModel next = *current;  // shares every tensor until a delta writes one
  PST_RETURN_IF_ERROR(ApplyDeltas(files, std::numeric_limits<int64_t>::max(), &next));
  if (next.step != current->step) {
    *current = std::move(next);
    *changed = true;
  }
  return Status::OK();
}

}  // namespace pst
