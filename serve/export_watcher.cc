#include "serve/export_watcher.h"

#include <glog/logging.h>

#include <utility>

namespace pst {

ExportWatcher::ExportWatcher(std::string dir, ModelHolder* holder)
    : dir_(std::move(dir)), holder_(holder) {
  holder_->SetWhyNone("no export in " + dir_ + " yet");
}

StatusOr<bool> ExportWatcher::Advance() {
  if (!current_) {
    PST_ASSIGN_OR_RETURN(ExportedModel first, LoadExport(dir_));
    current_ = std::move(first);
    return true;
  }
  // Updated on a copy (shallow: the tensors are shared until a delta writes
  // one), so that a failed update leaves current_ as it was.
  ExportedModel next = *current_;
  bool changed = false;
  PST_RETURN_IF_ERROR(UpdateExport(dir_, &next, &changed));
  if (changed) current_ = std::move(next);
  return changed;
}

void ExportWatcher::Poll() {
  StatusOr<bool> changed = Advance();
  if (!changed.ok()) return Report(changed.status());
  if (!*changed) return;
  StatusOr<std::unique_ptr<ServedModel>> served = ServeExport(dir_, *current_);
  // Not served: the next export that changes it is tried again.
  if (!served.ok()) return Report(served.status());
  last_error_.clear();
  LOG(INFO) << "serve: model at step " << (*served)->step << " (base " << (*served)->base_step
            << ", " << current_->deltas << " deltas) from " << (*served)->source;
  holder_->Publish(std::move(served).value());
}

void ExportWatcher::Report(const Status& status) {
  const bool serving = holder_->Get() != nullptr;
  // Before the first export the 503 says why, the folder being empty too.
  if (!serving) {
    holder_->SetWhyNone(status.code() == Code::kNotFound ? "no export in " + dir_ + " yet"
                                                         : status.message());
  }
  if (status.message() == last_error_) return;
  last_error_ = status.message();
  if (status.code() == Code::kNotFound && !serving) {
    LOG(INFO) << "serve: waiting for the first export in " << dir_;
  } else if (serving) {
    LOG(WARNING) << "serve: " << dir_
                 << " not applied, the model before keeps serving: " << status.ToString();
  } else {
    LOG(WARNING) << "serve: " << dir_ << " cannot be loaded: " << status.ToString();
  }
}

}  // namespace pst
