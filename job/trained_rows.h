// GatherTrainedRows: the rows a click model reads for a batch, taken from
// a trained model's whole tables (model.bin, an export) instead of the ps:
// a fixed table's row by id, a dynamic table's by key (binary search in its
// ascending keys), and a key it lacks as the ps would read it
// (DynamicTables). predict, serve and the chief's figures of a written
// model all gather this way.
#ifndef PST_JOB_TRAINED_ROWS_H_
#define PST_JOB_TRAINED_ROWS_H_

#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "job/model_file.h"
#include "model/model.h"

namespace pst {

// The rows of `ids` (model.RowIds' lists, one per table of `model`) from
// `trained`'s tables, which follow its variables in trained.params: one
// [ids[t].size(), dim] tensor per table into *rows. InvalidArgument naming
// the table for an id outside a fixed table.
Status GatherTrainedRows(const TrainedModel& trained, const Model& model, const TableRowIds& ids,
                         std::vector<Tensor>* rows);

}  // namespace pst

#endif  // PST_JOB_TRAINED_ROWS_H_
