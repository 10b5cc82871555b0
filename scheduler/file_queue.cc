#include "scheduler/file_queue.h"

namespace pst {

int FileQueue::Add(const std::vector<std::string>& found) {
  int added = 0;
  for (const std::string& path : found) {
    if (!seen_.insert(path).second) continue;
    waiting_.insert(path);
    ++added;
  }
  return added;
}

std::optional<std::string> FileQueue::Next(int worker) {
  if (auto it = held_.find(worker); it != held_.end()) return it->second;
  if (waiting_.empty()) return std::nullopt;
  std::string path = *waiting_.begin();
  waiting_.erase(waiting_.begin());
  held_[worker] = path;
  return path;
}

bool FileQueue::Finish(int worker, const std::string& path) {
  auto it = held_.find(worker);
  if (it == held_.end() || it->second != path) return false;
  held_.erase(it);
  ++finished_;
  return true;
}

void FileQueue::Reopen() {
  waiting_ = seen_;
  for (const auto& [worker, path] : held_) waiting_.erase(path);
}

void FileQueue::Release(int worker) {
  auto it = held_.find(worker);
  if (it == held_.end()) return;
  waiting_.insert(it->second);
  held_.erase(it);
}

}  // namespace pst
