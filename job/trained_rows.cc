#include "job/trained_rows.h"

#include <algorithm>
#include <string>

#include "model/ctr/initial_row.h"

namespace pst {
namespace {

// Row `key` of dynamic table `spec` into row[dim]: the row the model holds
// for it, else as the ps would read it.
void DynamicRow(const EmbeddingTableSpec& spec, const Tensor& values, const Tensor& keys,
                const DynamicTables& dynamic, int64_t key, float* row) {
  const int64_t* begin = keys.i64();
  const int64_t* end = begin + keys.num_elements();
  const int64_t* at = std::lower_bound(begin, end, key);
  if (at != end && *at == key) {
    const float* held = values.f32() + (at - begin) * spec.dim;
    std::copy(held, held + spec.dim, row);
  } else if (dynamic.min_count <= 1) {
    InitialRow(dynamic.seed, spec.name, key, dynamic.init_scale, spec.dim, row);
  } else {
    std::fill(row, row + spec.dim, 0.0f);
  }
}

}  // namespace

Status GatherTrainedRows(const TrainedModel& trained, const Model& model, const TableRowIds& ids,
                         std::vector<Tensor>* rows) {
  const size_t variables = model.variables().size();
  const std::vector<EmbeddingTableSpec>& specs = model.tables();
  if (trained.params.size() != variables + specs.size() || ids.size() != specs.size() ||
      (trained.table_rows == 0 && trained.dynamic.keys.size() != specs.size())) {
    return InvalidArgument("the trained model's tables do not fit the model's");
  }
  rows->clear();
  for (size_t t = 0; t < specs.size(); ++t) {
    const EmbeddingTableSpec& spec = specs[t];
    const Tensor& table = trained.params[variables + t];
    Tensor out =
        Tensor::Uninitialized(DType::kFloat32, {static_cast<int64_t>(ids[t].size()), spec.dim});
    for (size_t i = 0; i < ids[t].size(); ++i) {
      const int64_t id = ids[t][i];
      float* row = out.f32() + i * spec.dim;
      if (trained.table_rows == 0) {
        DynamicRow(spec, table, trained.dynamic.keys[t], trained.dynamic, id, row);
        continue;
      }
      if (id < 0 || id >= table.shape()[0]) {
        return InvalidArgument("row " + std::to_string(id) + " is outside table '" + spec.name +
                               "'");
      }
      std::copy(table.f32() + id * spec.dim, table.f32() + (id + 1) * spec.dim, row);
    }
    rows->push_back(std::move(out));
  }
  return Status::OK();
}

}  // namespace pst
