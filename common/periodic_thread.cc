#include "common/periodic_thread.h"

#include "common/clock.h"

namespace pst {

PeriodicThread::PeriodicThread(std::chrono::milliseconds period, std::function<void()> tick)
    : period_(period), tick_(std::move(tick)), thread_([this] { Loop(); }) {}

PeriodicThread::~PeriodicThread() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void PeriodicThread::Loop() {
  MutexLock lock(mu_);
  while (!stop_) {
    lock.Unlock();
    tick_();
    lock.Lock();
    const auto next = SteadyClock().Now() + period_;
    while (!stop_ && wake_.WaitUntil(mu_, next)) {
    }
  }
}

}  // namespace pst
