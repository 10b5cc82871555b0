// Incremental export (--export_every_secs, docs/STREAMING.md): the chief
// writes the model as it trains into one folder, as
//
//   base-<step>.bin    a model file (job/model_file.h) of the whole model at
//                      global step <step> (12 digits): predict reads it as it
//                      reads model.bin
//   delta-<step>.bin   a tensor file (common/tensor_file.h): every dense
//                      variable under its name, and per embedding table T the
//                      rows changed since the previous export, T@ids (int64
//                      [n]: a fixed table's row ids, a dynamic one's keys)
//                      and T@rows (float32 [n, dim]), and for a dynamic
//                      table T@removed (int64 [m]) the keys evicted since,
//                      when there are any; @delta/base (int64
//                      scalar): the step of the base it follows, and
//                      @delta/previous: the step of the export before it (the
//                      base or a delta of that base)
//
// A model at an export step is its base with each delta of that base, in
// step order, applied on top: a delta replaces the dense variables and
// overwrites its rows (a dynamic table first drops its removed keys, then
// takes its rows, adding the keys it lacks). Every file is written whole under a temporary name
// and renamed, so a reader never sees part of one; its CRC is checked on
// reading.
//
// Thread safety: functions only; a loaded ExportedModel is not changed by
// later calls (UpdateExport builds a new one).
#ifndef PST_JOB_EXPORT_FILES_H_
#define PST_JOB_EXPORT_FILES_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/tensor_file.h"
#include "job/model_file.h"

namespace pst {

// One table's rows changed since the previous export.
struct ChangedTableRows {
  std::string table;
  Tensor ids;      // int64 [n]
  Tensor rows;     // float32 [n, dim]
  Tensor removed;  // a dynamic table's keys evicted: int64 [m] (none: empty)
};

// The model of an export folder at one export step.
struct ExportedModel {
  TrainedModel trained;
  int64_t step = 0;       // the export's global step (the base's, or its newest delta's)
  int64_t base_step = 0;  // its base's
  int deltas = 0;         // applied on the base
  // The name of each of trained.params (the model's variables, then its
  // tables): what a delta's entries are matched by.
  std::vector<std::string> param_names;
};

// "base-000000001200.bin", "delta-000000001250.bin".
std::string BaseFileName(int64_t step);
std::string DeltaFileName(int64_t step);

// The export files of a folder, by step: paths of its bases and deltas.
struct ExportFiles {
  std::map<int64_t, std::string> bases, deltas;
};
// Empty for a missing folder; Unavailable for one that cannot be listed.
StatusOr<ExportFiles> ListExports(const std::string& dir);

// Writes a delta: `variables` (the model's dense variables, by name, in
// order) and `tables`, following the export at `previous_step` of the base
// at `base_step`. Written to a temporary name and renamed.
Status WriteDeltaFile(const std::string& path, int64_t base_step, int64_t previous_step,
                      const NamedTensors& variables, const std::vector<ChangedTableRows>& tables);

// The newest base of `dir` with its deltas applied in step order, up to
// `max_step`. NotFound when `dir` holds no base (at or below max_step);
// the readers' errors (DataLoss naming a corrupt file); DataLoss for a
// delta that does not fit its base (an unknown variable or table, a shape,
// an id out of range) or a chain with a gap (a delta whose previous export
// is missing).
StatusOr<ExportedModel> LoadExport(const std::string& dir,
                                   int64_t max_step = std::numeric_limits<int64_t>::max());

// Brings `current` up to the newest export of `dir`: the deltas of its
// base newer than it, or, when the newest base is another (a newer one, or
// an older one once a rollback's exports were removed), that base and its
// deltas. `*changed` says whether anything was applied. Tables a delta
// touches are copied before they are written, so a model handed out before
// (sharing the tensors) never changes under its reader.
Status UpdateExport(const std::string& dir, ExportedModel* current, bool* changed);

}  // namespace pst

#endif  // PST_JOB_EXPORT_FILES_H_
