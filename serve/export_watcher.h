// ExportWatcher: keeps a ModelHolder at the newest export of a folder
// (job/export_files.h). Each Poll() loads the first export once there is
// one, then applies what the chief wrote since (UpdateExport: its newer
// deltas, or a newer base and its deltas) and publishes the result as one
// new ServedModel. A poll that fails (a corrupt or missing delta, a model
// that cannot be served) publishes nothing: the model before keeps serving,
// and the error is logged once (again only when it changes). Until the
// first export loads, the holder's 503 says why.
//
// serve runs Poll() every --reload_every_ms on a PeriodicThread.
//
// Thread safety: Poll() from one thread at a time. Borrows the holder.
#ifndef PST_SERVE_EXPORT_WATCHER_H_
#define PST_SERVE_EXPORT_WATCHER_H_

#include <optional>
#include <string>

#include "common/status.h"
#include "job/export_files.h"
#include "serve/model_holder.h"

namespace pst {

class ExportWatcher {
 public:
  ExportWatcher(std::string dir, ModelHolder* holder);

  ExportWatcher(const ExportWatcher&) = delete;
  ExportWatcher& operator=(const ExportWatcher&) = delete;

  // One look at the folder; publishes a new model when the export moved on.
  void Poll();

 private:
  // Brings current_ to the folder's newest export: whether it changed.
  StatusOr<bool> Advance();
  void Report(const Status& status);

  const std::string dir_;
  ModelHolder* const holder_;
  std::optional<ExportedModel> current_;  // the export served; none before the first
  std::string last_error_;                // the error logged last; "" after a success
};

}  // namespace pst

#endif  // PST_SERVE_EXPORT_WATCHER_H_
