#include "common/signal_watcher.h"

#include <pthread.h>
#include <signal.h>

namespace pst {
namespace {

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);  // internal: wakes the thread at destruction
  return set;
}

}  // namespace

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal) {
  sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set, on_signal = std::move(on_signal)] {
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0) continue;
      if (done_.load()) return;
      if (signal != SIGUSR1) on_signal(signal);
    }
  });
}

SignalWatcher::~SignalWatcher() {
  done_.store(true);
  pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
}

}  // namespace pst
