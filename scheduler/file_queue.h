// FileQueue: which file of --train_files each worker trains (--follow), as a
// plain decision on the files found and the workers' requests.
//
// Files are handed out oldest name first (names that sort by time, as
// part-00017 or 2026-11-29T10:05, train in order), one worker per file. A
// worker that asks again while it holds a file gets the same one back (a
// worker restarted under the same index resumes its file); a worker that is
// gone gives its file back to the front of the queue. A finished file is
// never handed out again by this queue; after a chief restart a new queue
// hands out every file, and the ps' stream ledgers make the ones already
// trained cost a lookup (docs/STREAMING.md).
//
// Thread safety: none.
#ifndef PST_SCHEDULER_FILE_QUEUE_H_
#define PST_SCHEDULER_FILE_QUEUE_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pst {

class FileQueue {
 public:
  // Adds the files of `found` not seen before; returns how many.
  int Add(const std::vector<std::string>& found);
  // The file worker `worker` trains next: the one it holds, else the oldest
  // waiting (now held by it); nullopt when none waits.
  std::optional<std::string> Next(int worker);
  // `worker` finished `path`. False (and nothing changes) when it does not
  // hold it: a report of a file handed to another worker since.
  bool Finish(int worker, const std::string& path);
  // `worker` is gone: the file it held waits again, first in line.
  void Release(int worker);
  // Every file not held waits again: the cluster went back to a checkpoint,
  // which may not hold files finished since (the ps' stream ledgers say
  // which it holds, so a worker handed a file trained already skips it).
  void Reopen();

  size_t waiting() const { return waiting_.size(); }
  size_t held() const { return held_.size(); }
  size_t finished() const { return finished_; }

 private:
  std::set<std::string> seen_;
  std::set<std::string> waiting_;    // in name order
  std::map<int, std::string> held_;  // by worker
  size_t finished_ = 0;
};

}  // namespace pst

#endif  // PST_SCHEDULER_FILE_QUEUE_H_
