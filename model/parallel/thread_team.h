// ThreadTeam: runs one function on `size` threads at once, each index always
// on the same thread: index 0 on the caller of Run(), index i > 0 on the
// team's own thread i, started by the constructor and joined by the
// destructor. Keeping each index on one thread keeps per-thread device
// state (a CUDA current device) in place from call to call, and reusing the
// threads keeps thread creation out of every step.
//
// Thread safety: Run() is called by one thread at a time (not concurrently
// with itself or the destructor).
#ifndef PST_MODEL_PARALLEL_THREAD_TEAM_H_
#define PST_MODEL_PARALLEL_THREAD_TEAM_H_

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace pst {

class ThreadTeam {
 public:
  // size >= 1 (CHECKed); starts size - 1 threads.
  explicit ThreadTeam(int size);
  ~ThreadTeam();

  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return static_cast<int>(threads_.size()) + 1; }

  // Calls fn(i) for every i in [0, size()) concurrently and returns once
  // all of them have returned. fn must not throw.
  void Run(const std::function<void(int)>& fn);

 private:
  void Loop(int index);

  Mutex mu_;
  CondVar start_;  // a new job_, or stopping_
  CondVar done_;   // pending_ reached 0
  // The current job, bumped generation_ per Run(), how many team threads
  // are still in it, and the destructor's signal.
  const std::function<void(int)>* job_ GUARDED_BY(mu_) = nullptr;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  int pending_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;

  std::vector<std::thread> threads_;  // index i + 1; touched by ctor/dtor
};

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_THREAD_TEAM_H_
