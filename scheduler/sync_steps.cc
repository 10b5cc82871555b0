#include "scheduler/sync_steps.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace pst {

SyncSteps::SyncSteps(std::vector<int> sync_shards, int num_workers, int64_t train_steps,
                     SyncQuorum quorum)
    : train_steps_(train_steps),
      tokens_(num_workers),
      clock_(*quorum.clock),
      quorum_(quorum.fixed > 0 ? quorum.fixed : num_workers) {
  if (quorum.fixed == 0) adaptive_.emplace(num_workers, quorum.window);
  const int shards =
      sync_shards.empty() ? 0 : *std::max_element(sync_shards.begin(), sync_shards.end()) + 1;
  applied_.assign(shards, -1);
  for (int k : sync_shards) applied_[k] = 0;
}

void SyncSteps::StepOpens(int64_t step) {
  if (!adaptive_) return;
  const int n = adaptive_->StepOpened(step, clock_.Now());
  if (n == quorum_) return;
  LOG(INFO) << "replicas_to_aggregate=auto: step " << step << " aggregates " << n
            << " gradients (was " << quorum_ << "): expected " << adaptive_->ExpectedRate(n)
            << " batches/s against " << adaptive_->ExpectedRate(quorum_);
  quorum_ = n;
}

TokenRelease SyncSteps::Open(int64_t step) {
  global_step_ = step;
  paused_ = false;
  closed_ = false;
  for (int64_t& a : applied_) {
    if (a >= 0) a = step;
  }
  if (adaptive_) adaptive_->Forget();
  StepOpens(step);
  return {tokens_.Reset(step), step, quorum_};
}

TokenAnswer SyncSteps::Request(int worker, int64_t last_received) {
  // The request that follows a worker's push of step `last_received`.
  if (adaptive_ && last_received >= 0) {
    adaptive_->GradientArrived(worker, last_received, clock_.Now());
  }
  return tokens_.Take(worker, last_received);
}

TokenRelease SyncSteps::ShardApplied(int shard, int64_t step) {
  if (shard < 0 || shard >= static_cast<int>(applied_.size()) || applied_[shard] < 0) {
    LOG(WARNING) << "step notice from ps:" << shard << ", which holds no trainable variable";
    return {};
  }
  // No shard can apply a step whose tokens are not out yet: such a notice
  // was sent before a recovery rolled the shards back.
  if (step > global_step_) {
    LOG(WARNING) << "ignoring ps:" << shard << "'s notice of step " << step
                 << " from before the rollback to step " << global_step_;
    return {};
  }
  applied_[shard] = std::max(applied_[shard], step + 1);
  int64_t slowest = std::numeric_limits<int64_t>::max();
  for (int64_t a : applied_) {
    if (a >= 0) slowest = std::min(slowest, a);
  }
  if (slowest <= global_step_) return {};
  global_step_ = slowest;
  // At --train_steps no step opens and the workers wait until the chief has
  // secured the result and closes: a ps lost before that is recovered with
  // the workers still there to train the lost steps again.
  if (global_step_ >= train_steps_ || paused_) return {};
  StepOpens(global_step_);
  return {tokens_.Advance(global_step_), global_step_, quorum_};
}

void SyncSteps::Pause() { paused_ = true; }

// A step still in flight could be applied by a shard while its part is
// written, and the checkpoint would be torn. Once closed the step in flight
// is abandoned (the workers are leaving): its gradients so far sit in the
// shards' accumulators, which are not saved, so only the steps applied need
// to agree.
bool SyncSteps::Settled() const {
  const std::optional<int64_t> in_flight = tokens_.current_step();
  if (!closed_ && in_flight && *in_flight >= global_step_) return false;
  for (int64_t a : applied_) {
    if (a >= 0 && a != global_step_) return false;
  }
  return true;
}

TokenRelease SyncSteps::Resume() {
  paused_ = false;
  const std::optional<int64_t> out = tokens_.current_step();
  if (global_step_ >= train_steps_ || (out && *out >= global_step_)) return {};
  StepOpens(global_step_);
  return {tokens_.Advance(global_step_), global_step_, quorum_};
}

TokenRelease SyncSteps::Close() {
  closed_ = true;
  return {tokens_.Close(), -1, 0};
}

}  // namespace pst
