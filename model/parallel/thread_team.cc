#include "model/parallel/thread_team.h"

#include <glog/logging.h>

namespace pst {

ThreadTeam::ThreadTeam(int size) {
  CHECK_GE(size, 1);
  for (int i = 1; i < size; ++i) threads_.emplace_back([this, i] { Loop(i); });
}

ThreadTeam::~ThreadTeam() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  start_.NotifyAll();
  for (std::thread& thread : threads_) thread.join();
}

void ThreadTeam::Run(const std::function<void(int)>& fn) {
  {
    MutexLock lock(mu_);
    job_ = &fn;
    pending_ = static_cast<int>(threads_.size());
    ++generation_;
  }
  start_.NotifyAll();
  fn(0);
  MutexLock lock(mu_);
  while (pending_ != 0) done_.Wait(mu_);
  job_ = nullptr;
}

void ThreadTeam::Loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      MutexLock lock(mu_);
      while (!stopping_ && generation_ == seen) start_.Wait(mu_);
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(index);
    MutexLock lock(mu_);
    if (--pending_ == 0) done_.NotifyOne();
  }
}

}  // namespace pst
