// PeriodicThread: calls `tick` on a thread of its own at once and then every
// `period`, from construction until destruction.
//
// Thread safety: constructed and destroyed by one thread; `tick` runs on
// the periodic thread only.
#ifndef PST_COMMON_PERIODIC_THREAD_H_
#define PST_COMMON_PERIODIC_THREAD_H_

#include <chrono>
#include <functional>
#include <thread>

#include "common/mutex.h"

namespace pst {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::milliseconds period, std::function<void()> tick);
  // Wakes the thread and waits for a running tick to return.
  ~PeriodicThread();

  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  void Loop();

  const std::chrono::milliseconds period_;
  const std::function<void()> tick_;
  Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace pst

#endif  // PST_COMMON_PERIODIC_THREAD_H_
