#include "scheduler/token_queue.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {

TokenQueue::TokenQueue(int num_workers) : taken_(num_workers, -1), waiting_(num_workers, false) {}

TokenAnswer TokenQueue::Take(int worker, int64_t last_received) {
  CHECK(worker >= 0 && worker < static_cast<int>(taken_.size())) << worker;
  if (closed_) return {TokenAnswer::Verdict::kStop, -1};
  // A grant may have been lost (e.g. sent to a request the worker had given
  // up on): unless the worker says it holds the current step, it gets it
  // (again). After a rollback its "current step" may be from before: then
  // only a grant of this queue's counts.
  if (step_ && (last_received != *step_ || taken_[worker] < *step_)) {
    taken_[worker] = *step_;
    waiting_[worker] = false;
    return {TokenAnswer::Verdict::kGo, *step_};
  }
  waiting_[worker] = true;
  return {TokenAnswer::Verdict::kWait, -1};
}

std::vector<int> TokenQueue::TakeWaiting(int64_t step) {
  std::vector<int> workers;
  for (size_t w = 0; w < waiting_.size(); ++w) {
    if (!waiting_[w]) continue;
    workers.push_back(static_cast<int>(w));
    waiting_[w] = false;
    if (step >= 0) taken_[w] = step;
  }
  return workers;
}

std::vector<int> TokenQueue::Advance(int64_t step) {
  CHECK(!step_ || step > *step_) << "token steps only move forward";
  step_ = step;
  if (closed_) return {};
  return TakeWaiting(step);
}

std::vector<int> TokenQueue::Reset(int64_t step) {
  step_ = step;
  std::fill(taken_.begin(), taken_.end(), -1);
  if (closed_) return {};
  return TakeWaiting(step);
}

std::vector<int> TokenQueue::Close() {
  closed_ = true;
  return TakeWaiting(-1);
}

}  // namespace pst
