// ServedModel: one click model as the server answers with it, whole and
// never changed once made. Requests hold it by std::shared_ptr for as long
// as they use it, so a model swapped out meanwhile stays whole under them
// and goes away with its last request.
#ifndef PST_SERVE_SERVED_MODEL_H_
#define PST_SERVE_SERVED_MODEL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "job/export_files.h"
#include "job/model_file.h"
#include "serve/named_fields.h"

namespace pst {

struct ServedModel {
  TrainedModel trained;
  std::string source;     // the file it came from: a model.bin, or the export's newest file
  int64_t step = 0;       // the export's global step; 0 for a plain model.bin
  int64_t base_step = 0;  // its base's; 0 for a plain model.bin
  // When `source` was written (its modification time), and when it was
  // loaded here.
  std::chrono::system_clock::time_point written_at;
  std::chrono::system_clock::time_point loaded_at;
  // 1 for the first model a server loads, then one more per load
  // (ModelHolder::Publish sets it): newer models have larger numbers.
  int64_t load = 0;
  // The names of its input fields, for "fields" requests; null when it has
  // none, and then `no_field_names` says why (SetFieldNames makes both).
  std::shared_ptr<const NamedFields> field_names;
  std::string no_field_names;
};

// Sets served->field_names (or no_field_names) from served->trained.
void SetFieldNames(ServedModel* served);

// A plain model.bin (--model_file). Errors: ReadModelFile's, and
// CheckServable's.
StatusOr<std::unique_ptr<ServedModel>> ServeModelFile(const std::string& path);

// The export `exported` of folder `dir` (job/export_files.h). Errors:
// CheckServable's.
StatusOr<std::unique_ptr<ServedModel>> ServeExport(const std::string& dir,
                                                   const ExportedModel& exported);

// FailedPrecondition, naming `source`, for a model the server cannot answer
// with: one that is no click model, or whose model cannot be built.
Status CheckServable(const TrainedModel& trained, const std::string& source);

}  // namespace pst

#endif  // PST_SERVE_SERVED_MODEL_H_
