#include "chief/streaming/file_dispatcher.h"

#include <glog/logging.h>

#include "data/file_glob.h"

namespace pst {

std::string FileDispatcher::Next(int worker, const std::optional<StreamedFile>& finished,
                                 const std::vector<bool>& gone) {
  MutexLock lock(mu_);
  if (finished && queue_.Finish(worker, finished->path)) {
    finished_.push_back(*finished);
    finished_.back().worker = worker;
  }
  for (size_t w = 0; w < gone.size(); ++w) {
    if (gone[w] && static_cast<int>(w) != worker) queue_.Release(static_cast<int>(w));
  }
  ListIfDue();
  return queue_.Next(worker).value_or("");
}

void FileDispatcher::ListIfDue() {
  const auto now = clock_.Now();
  if (listed_ && now - *listed_ < kListInterval) return;
  listed_ = now;
  StatusOr<std::vector<std::string>> files = MatchingFiles(pattern_);
  if (!files.ok()) {
    // The folder may come back (a remount); say so once.
    if (!list_error_logged_) LOG(WARNING) << "--train_files: " << files.status().message();
    list_error_logged_ = true;
    return;
  }
  list_error_logged_ = false;
  found_ += static_cast<size_t>(queue_.Add(*files));
}

void FileDispatcher::Reopen() {
  MutexLock lock(mu_);
  queue_.Reopen();
}

std::vector<StreamedFile> FileDispatcher::TakeFinished() {
  MutexLock lock(mu_);
  std::vector<StreamedFile> out;
  out.swap(finished_);
  return out;
}

FileDispatcher::Counts FileDispatcher::counts() const {
  MutexLock lock(mu_);
  return Counts{found_, queue_.finished(), queue_.waiting(), queue_.held()};
}

}  // namespace pst
