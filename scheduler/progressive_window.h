// ProgressiveWindow: progressive validation (--follow) over the last few
// files: each file's AUC and log-loss, measured on its lines before they
// were trained, averaged over the newest `files` of them, each weighted by
// its lines.
//
// Thread safety: none.
#ifndef PST_SCHEDULER_PROGRESSIVE_WINDOW_H_
#define PST_SCHEDULER_PROGRESSIVE_WINDOW_H_

#include <cstdint>
#include <deque>

namespace pst {

struct FileScore {
  int64_t examples = 0;
  double auc = 0;
  double log_loss = 0;
};

class ProgressiveWindow {
 public:
  explicit ProgressiveWindow(int files) : files_(files < 1 ? 1 : files) {}

  // Adds a file's score (one with no examples is ignored).
  void Add(const FileScore& score);
  // The line-weighted mean over the window (zeros before any file).
  FileScore Mean() const;
  int64_t files_seen() const { return files_seen_; }

 private:
  const int files_;
  std::deque<FileScore> window_;
  int64_t files_seen_ = 0;
};

}  // namespace pst

#endif  // PST_SCHEDULER_PROGRESSIVE_WINDOW_H_
