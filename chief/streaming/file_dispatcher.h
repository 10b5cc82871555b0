// FileDispatcher: the chief's side of --follow. It lists the files of
// --train_files (at most every kListInterval, when a worker asks), hands
// them to the workers through a FileQueue (scheduler/file_queue.h), takes
// back the files of workers gone, and keeps each finished file's
// progressive validation for the reporter.
//
// Thread safety: every method may be called from any thread (the service
// asks on its thread, the timeline takes the finished files on its own).
#ifndef PST_CHIEF_STREAMING_FILE_DISPATCHER_H_
#define PST_CHIEF_STREAMING_FILE_DISPATCHER_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "scheduler/file_queue.h"

namespace pst {

// A file a worker finished: its lines trained by that worker, with their
// AUC and log-loss as predicted before training on them; or why it was not
// trained.
struct StreamedFile {
  std::string path;
  int worker = 0;
  int64_t examples = 0;
  int64_t positives = 0;
  double auc = 0;
  double log_loss = 0;
  std::string error;
};

class FileDispatcher {
 public:
  static constexpr std::chrono::milliseconds kListInterval{500};

  FileDispatcher(std::string pattern, const MonotonicClock& clock)
      : pattern_(std::move(pattern)), clock_(clock) {}

  // Worker `worker` asks for its next file, having finished `finished`
  // (when set): the path, "" when none waits. `gone`: by worker, those
  // gone (ChiefState::gone_worker_mask), whose files wait again first.
  std::string Next(int worker, const std::optional<StreamedFile>& finished,
                   const std::vector<bool>& gone);
  // The cluster went back to a checkpoint: every file not held is handed
  // out again (FileQueue::Reopen).
  void Reopen();
  // The files finished since the last call, in the order they finished.
  std::vector<StreamedFile> TakeFinished();

  // For the log: files found, finished, waiting.
  struct Counts {
    size_t found = 0, finished = 0, waiting = 0, held = 0;
  };
  Counts counts() const;

 private:
  void ListIfDue() REQUIRES(mu_);

  const std::string pattern_;
  const MonotonicClock& clock_;
  mutable Mutex mu_;
  FileQueue queue_ GUARDED_BY(mu_);
  size_t found_ GUARDED_BY(mu_) = 0;
  std::optional<MonotonicClock::TimePoint> listed_ GUARDED_BY(mu_);
  std::vector<StreamedFile> finished_ GUARDED_BY(mu_);
  bool list_error_logged_ GUARDED_BY(mu_) = false;
};

}  // namespace pst

#endif  // PST_CHIEF_STREAMING_FILE_DISPATCHER_H_
