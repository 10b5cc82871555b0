// SignalWatcher: turns SIGINT/SIGTERM into a callback on a dedicated thread,
// so shutdown code runs in a normal context (not in a signal handler).
//
// Construct it in main() before starting any other thread: it blocks the
// signals for the calling thread, and threads started later inherit that.
#ifndef PST_COMMON_SIGNAL_WATCHER_H_
#define PST_COMMON_SIGNAL_WATCHER_H_

#include <atomic>
#include <functional>
#include <thread>

namespace pst {

class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void(int signal)> on_signal);
  ~SignalWatcher();  // stops and joins the watching thread

  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace pst

#endif  // PST_COMMON_SIGNAL_WATCHER_H_
