#include "scheduler/staleness_gate.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {

StalenessGate::StalenessGate(int num_workers, int64_t bound)
    : bound_(bound), workers_(num_workers) {
  CHECK_GE(bound, 0);
}

Admission StalenessGate::Ask(int worker, int64_t completed) {
  CHECK(worker >= 0 && worker < static_cast<int>(workers_.size())) << worker;
  CHECK_GE(completed, 0);
  Admission admission;
  if (closed_) {
    admission.verdict = Admission::Verdict::kStop;
    return admission;
  }
  WorkerClock& w = workers_[worker];
  w.waiting = false;  // this request replaces an older one
  if (completed < w.reported) w.offset = w.clock() - completed;  // restarted: keep its clock
  w.reported = completed;
  if (!w.counted) {
    const std::optional<int64_t> slowest = this->slowest();
    if (slowest && *slowest > w.clock()) w.offset = *slowest - completed;
    w.counted = true;
  }
  // Its clock moved: it may have been the slowest.
  admission.released = Release();
  const int64_t slowest = *this->slowest();  // counted: there is one
  if (w.clock() <= slowest + bound_) {
    admission.verdict = Admission::Verdict::kGo;
    admission.clock = w.clock();
    admission.slowest = slowest;
  } else {
    w.waiting = true;
  }
  return admission;
}

std::vector<ClockGrant> StalenessGate::Leave(int worker) {
  CHECK(worker >= 0 && worker < static_cast<int>(workers_.size())) << worker;
  WorkerClock& w = workers_[worker];
  w.counted = false;
  w.waiting = false;
  return Release();
}

std::vector<ClockGrant> StalenessGate::Close() {
  closed_ = true;
  const int64_t slowest = this->slowest().value_or(0);
  std::vector<ClockGrant> stopped;
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerClock& w = workers_[i];
    if (!w.waiting) continue;
    stopped.push_back({static_cast<int>(i), w.clock(), slowest});
    w.waiting = false;
  }
  return stopped;
}

std::optional<int64_t> StalenessGate::slowest() const {
  std::optional<int64_t> slowest;
  for (const WorkerClock& w : workers_) {
    if (w.counted) slowest = std::min(slowest.value_or(w.clock()), w.clock());
  }
  return slowest;
}

std::vector<ClockGrant> StalenessGate::Release() {
  std::vector<ClockGrant> grants;
  const std::optional<int64_t> slowest = this->slowest();
  if (!slowest) return grants;
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerClock& w = workers_[i];
    if (!w.waiting || w.clock() > *slowest + bound_) continue;
    grants.push_back({static_cast<int>(i), w.clock(), *slowest});
    w.waiting = false;
  }
  return grants;
}

}  // namespace pst
