// ProgressCounter: how many items one thread has handed on to another, for
// a pipeline stage to wait until its neighbour has finished micro-batch m.
// The producer calls Advance() after each item; a consumer WaitFor(n)
// returns once n items are done. Reset() starts a new step; call it only
// when no thread is waiting.
//
// Thread-safe.
#ifndef PST_MODEL_PARALLEL_PROGRESS_COUNTER_H_
#define PST_MODEL_PARALLEL_PROGRESS_COUNTER_H_

#include "common/mutex.h"

namespace pst {

class ProgressCounter {
 public:
  void Reset();
  void Advance();
  void WaitFor(int count);

 private:
  Mutex mu_;
  CondVar advanced_;
  int done_ GUARDED_BY(mu_) = 0;
};

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_PROGRESS_COUNTER_H_
