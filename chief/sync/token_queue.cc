#include "chief/sync/token_queue.h"

namespace pst {

TokenQueue::TokenQueue(int num_workers) : taken_(num_workers, -1), parked_(num_workers) {}

std::optional<int64_t> TokenQueue::TakeOrPark(int worker, int64_t last_received,
                                              RequestContext& context) {
  MutexLock lock(mu_);
  if (closed_) return std::nullopt;
  // A grant may have been lost (e.g. sent to a request the worker had given
  // up on): unless the worker says it holds the current step, it gets it
  // (again). After a rollback its "current step" may be from before: then
  // only a grant of this queue's counts.
  if (step_ && (last_received != *step_ || taken_[worker] < *step_)) {
    taken_[worker] = *step_;
    return step_;
  }
  parked_[worker] = context.Defer();
  return std::nullopt;
}

std::vector<TokenGrant> TokenQueue::TakeParked(int64_t step) {
  std::vector<TokenGrant> grants;
  for (size_t w = 0; w < parked_.size(); ++w) {
    if (!parked_[w]) continue;
    grants.push_back({std::move(*parked_[w]), step});
    parked_[w].reset();
    if (step >= 0) taken_[w] = step;
  }
  return grants;
}

std::vector<TokenGrant> TokenQueue::Advance(int64_t step) {
  MutexLock lock(mu_);
  CHECK(!step_ || step > *step_) << "token steps only move forward";
  step_ = step;
  if (closed_) return {};
  return TakeParked(step);
}

std::vector<TokenGrant> TokenQueue::Reset(int64_t step) {
  MutexLock lock(mu_);
  step_ = step;
  std::fill(taken_.begin(), taken_.end(), -1);
  if (closed_) return {};
  return TakeParked(step);
}

std::vector<TokenGrant> TokenQueue::Close() {
  MutexLock lock(mu_);
  closed_ = true;
  return TakeParked(-1);
}

std::optional<int64_t> TokenQueue::current_step() const {
  MutexLock lock(mu_);
  return step_;
}

}  // namespace pst
