// model.bin: the trained model, with what rebuilding it needs.
//
// A tensor file (common/tensor_file.h) holding the model's variables under
// their names, in the model's order, then:
//   @model/version      int64 scalar, 1
//   @model/input_shape  int64 [rank]: {H, W, C} or {D}
//   @model/classes      int64 scalar
//   @model/standardize_mean, @model/standardize_scale
//                       float32 [D], only for a run with --normalize
//   @model/spec         int64 [n], a --model_spec's model name
//                       (SpecModelName: "spec:" + its text), one byte an
//                       element; only for such a model
//   @model/click_embedding_dim     int64 scalar; a click model trained with
//                       a --features file that states a dim
//   @model/click_field_combiners   int64 [fields], 0 sum, 1 mean, 2 sqrtn;
//                       a click model whose --features file states combiners
//   @model/click_field_dims    int64 [fields]; a click model whose --features
//                       file gives its fields different dims
//   @model/click_field_ranges  int64 [2 x fields], each field's key range
//                       (offset, rows); with click_field_dims and hashed tables
//   @model/click_features  int64 [n], the --features file's text, one byte
//                       an element; a click model trained with one (predict
//                       needs the same file to transform its data)
//   @model/table_keys/<table>  int64 [n], strictly ascending: a dynamic
//                       table's keys (@model/click_table_rows 0), one per
//                       row of the table's [n, dim] values
//   @model/click_dynamic_rows  int64 [2], {min_count, seed}, and
//   @model/click_init_scale    float32 [1]: how a dynamic table's key that
//                       the file lacks reads (DynamicTables)
// The model is the zoo's whose variables (names and shapes) these are, for
// that input and class count. docs/FORMATS.md describes the same.
#ifndef PST_JOB_MODEL_FILE_H_
#define PST_JOB_MODEL_FILE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "data/standardize.h"
#include "job/job.h"
#include "model/model.h"

namespace pst {

// A click model's dynamic tables (table_rows == 0) as a model file holds
// them: each table's keys, ascending, one per row of its values. A key a
// table lacks reads as the ps would create its row: InitialRow(seed, table,
// key, init_scale) when min_count is 1, zeros otherwise (a key not admitted
// reads as zeros).
struct DynamicTables {
  std::vector<Tensor> keys;  // int64 [n] per table, in the order of tables()
  int64_t min_count = 1;
  uint64_t seed = 0;
  float init_scale = 0.05f;
};

struct TrainedModel {
  std::string model;  // the zoo's name
  InputShape input = 0;
  int num_classes = 0;
  std::optional<Standardization> standardization;
  // In the model's variable order; a click model's whole tables follow
  // ([rows, dim] each, in the order of its tables()).
  std::vector<Tensor> params;
  // Click models (model/ctr/ctr_model.h): fixed tables of table_rows rows,
  // or dynamic ones (table_rows 0, with `dynamic`).
  bool click_model = false;
  int num_fields = 0;
  int64_t table_rows = 0;
  DynamicTables dynamic;
  // Click models trained with --features: the file's dim (0: the model's)
  // and per-field combiners (empty: the model's), CtrModelConfig's.
  int64_t embedding_dim = 0;
  std::vector<Combiner> field_combiners;
  // ... and, when its fields have different dims, CtrModelConfig's
  // field_dims and field_ranges.
  std::vector<int64_t> field_dims;
  std::vector<KeyRange> field_ranges;
  std::string features_text;  // the --features file's text; "" without one
};

// The model a trained model file describes, on the CPU.
StatusOr<std::unique_ptr<Model>> MakeTrainedModel(const TrainedModel& trained);

// `params`, trained on `job`, with what rebuilding their model needs
// (`dynamic`: the keys of a click model's dynamic tables).
TrainedModel TrainedModelOf(const Job& job, std::vector<Tensor> params, DynamicTables dynamic = {});

// Writes `params` (of `model`, trained on `job`; a click model's whole
// tables after its variables, and with dynamic tables their keys in
// `dynamic`) to `path` atomically. InvalidArgument when a dynamic table's
// keys do not fit its rows or are not strictly ascending.
Status WriteModelFile(const std::string& path, const Job& job, const Model& model,
                      const std::vector<Tensor>& params, const DynamicTables& dynamic = {});

// DataLoss naming the file for a truncated or corrupt one (the tensor
// file's CRC); FailedPrecondition for a file without the @model entries (an
// older pstrain's, or not a model) or whose variables match no model.
StatusOr<TrainedModel> ReadModelFile(const std::string& path);

}  // namespace pst

#endif  // PST_JOB_MODEL_FILE_H_
