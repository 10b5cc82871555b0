#include "model/parallel/progress_counter.h"

namespace pst {

void ProgressCounter::Reset() {
  MutexLock lock(mu_);
  done_ = 0;
}

void ProgressCounter::Advance() {
  {
    MutexLock lock(mu_);
    ++done_;
  }
  advanced_.NotifyAll();
}

void ProgressCounter::WaitFor(int count) {
  MutexLock lock(mu_);
  while (done_ < count) advanced_.Wait(mu_);
}

}  // namespace pst
