#include "scheduler/progressive_window.h"

namespace pst {

void ProgressiveWindow::Add(const FileScore& score) {
  if (score.examples <= 0) return;
  window_.push_back(score);
  if (static_cast<int>(window_.size()) > files_) window_.pop_front();
  ++files_seen_;
}

FileScore ProgressiveWindow::Mean() const {
  FileScore mean;
  for (const FileScore& s : window_) {
    mean.examples += s.examples;
    mean.auc += s.auc * static_cast<double>(s.examples);
    mean.log_loss += s.log_loss * static_cast<double>(s.examples);
  }
  if (mean.examples > 0) {
    mean.auc /= static_cast<double>(mean.examples);
    mean.log_loss /= static_cast<double>(mean.examples);
  }
  return mean;
}

}  // namespace pst
