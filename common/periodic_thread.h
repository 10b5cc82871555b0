// PeriodicThread: calls `tick` on a thread of its own at once and then every
// `period`, from construction until destruction.
//
// Thread safety: constructed and destroyed by one thread; `tick` runs on
// the periodic thread only.
#ifndef PST_COMMON_PERIODIC_THREAD_H_
#define PST_COMMON_PERIODIC_THREAD_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

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
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace pst

#endif  // PST_COMMON_PERIODIC_THREAD_H_
