#include "common/periodic_thread.h"

namespace pst {

PeriodicThread::PeriodicThread(std::chrono::milliseconds period, std::function<void()> tick)
    : period_(period), tick_(std::move(tick)), thread_([this] { Loop(); }) {}

PeriodicThread::~PeriodicThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PeriodicThread::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    tick_();
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stop_; });
  }
}

}  // namespace pst
