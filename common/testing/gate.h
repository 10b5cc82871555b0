// Gate: holds threads (a test's request handlers) until a test opens it,
// once. OpenOnExit opens it when it goes out of scope: declared after a
// server, it lets a handler still held pass before the server joins its
// threads, even when the test fails.
//
// Thread-safe. Header-only, for tests.
#ifndef PST_COMMON_TESTING_GATE_H_
#define PST_COMMON_TESTING_GATE_H_

#include "common/mutex.h"

namespace pst {

class Gate {
 public:
  void Open() {
    MutexLock lock(mu_);
    open_ = true;
    opened_.NotifyAll();
  }
  // Returns once the gate is open.
  void Pass() {
    MutexLock lock(mu_);
    while (!open_) opened_.Wait(mu_);
  }

 private:
  Mutex mu_;
  CondVar opened_;
  bool open_ GUARDED_BY(mu_) = false;
};

struct OpenOnExit {
  ~OpenOnExit() { gate.Open(); }
  Gate& gate;
};

}  // namespace pst

#endif  // PST_COMMON_TESTING_GATE_H_
