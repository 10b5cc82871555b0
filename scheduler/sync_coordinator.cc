#include "scheduler/sync_coordinator.h"

#include <algorithm>
#include <limits>

namespace pst {

SyncCoordinator::SyncCoordinator(std::vector<int> sync_shards, int num_workers, int64_t train_steps,
                                 ReplySender* replies)
    : train_steps_(train_steps), replies_(replies), tokens_(num_workers) {
  const int shards =
      sync_shards.empty() ? 0 : *std::max_element(sync_shards.begin(), sync_shards.end()) + 1;
  applied_.assign(shards, -1);
  for (int k : sync_shards) applied_[k] = 0;
}

OutgoingMessage TokenReply(int64_t step) {
  OutgoingMessage reply;
  reply.type = wire::MessageType::TokenReply;
  reply.step = step;
  const wire::ClusterState state =
      step < 0 ? wire::ClusterState::Stopping : wire::ClusterState::Training;
  reply.extras = [state](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, 0, state);
    return extras;
  };
  return reply;
}

void SyncCoordinator::Send(std::vector<TokenGrant> grants) {
  for (TokenGrant& g : grants) replies_->SendDeferred(std::move(g.to), TokenReply(g.step));
}

void SyncCoordinator::Open(int64_t step) {
  std::vector<TokenGrant> grants;
  {
    MutexLock lock(mu_);
    global_step_ = step;
    paused_ = false;
    closed_ = false;
    for (int64_t& a : applied_) {
      if (a >= 0) a = step;
    }
    grants = tokens_.Reset(step);
  }
  Send(std::move(grants));
}

OutgoingMessage SyncCoordinator::HandleTokenRequest(int worker, int64_t last_received,
                                                    RequestContext& context) {
  std::optional<int64_t> step = tokens_.TakeOrPark(worker, last_received, context);
  // Parked: the return value is ignored. Closed and not parked: stop.
  return TokenReply(step.value_or(-1));
}

void SyncCoordinator::ShardApplied(int shard, int64_t step) {
  std::vector<TokenGrant> grants;
  {
    MutexLock lock(mu_);
    if (shard < 0 || shard >= static_cast<int>(applied_.size()) || applied_[shard] < 0) {
      LOG(WARNING) << "step notice from ps:" << shard << ", which holds no trainable variable";
      return;
    }
    // No shard can apply a step whose tokens are not out yet: such a notice
    // was sent before a recovery rolled the shards back.
    if (step > global_step_) {
      LOG(WARNING) << "ignoring ps:" << shard << "'s notice of step " << step
                   << " from before the rollback to step " << global_step_;
      return;
    }
    applied_[shard] = std::max(applied_[shard], step + 1);
    applied_changed_.NotifyAll();
    int64_t slowest = std::numeric_limits<int64_t>::max();
    for (int64_t a : applied_) {
      if (a >= 0) slowest = std::min(slowest, a);
    }
    if (slowest <= global_step_) return;
    global_step_ = slowest;
    // Token steps only move forward: advanced under mu_, like Resume(). At
    // --train_steps no step opens and the workers wait until the chief has
    // secured the result and Close()s: a ps lost before that is recovered
    // with the workers still there to train the lost steps again.
    if (global_step_ < train_steps_ && !paused_) grants = tokens_.Advance(global_step_);
  }
  Send(std::move(grants));
}

StatusOr<int64_t> SyncCoordinator::Pause(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  paused_ = true;
  // Settled: every sync shard has applied exactly the global step's steps,
  // and the step whose tokens are out is among them (paused, no later one
  // starts). A step still in flight could be applied by a shard while its
  // part is written, and the checkpoint would be torn.
  // Once closed the step in flight is abandoned (the workers are leaving):
  // its gradients so far sit in the shards' accumulators, which are not
  // saved, so only the steps applied need to agree.
  bool notified = true;
  while (!Settled()) {
    if (!notified) {
      return DeadlineExceeded("the ps shards did not all finish sync step " +
                              std::to_string(global_step_) + " before the checkpoint's deadline");
    }
    notified = applied_changed_.WaitUntil(mu_, deadline);
  }
  return global_step_;
}

bool SyncCoordinator::Settled() const {
  const std::optional<int64_t> in_flight = tokens_.current_step();
  if (!closed_ && in_flight && *in_flight >= global_step_) return false;
  for (int64_t a : applied_) {
    if (a >= 0 && a != global_step_) return false;
  }
  return true;
}

void SyncCoordinator::Resume() {
  std::vector<TokenGrant> grants;
  {
    MutexLock lock(mu_);
    paused_ = false;
    const std::optional<int64_t> out = tokens_.current_step();
    if (global_step_ >= train_steps_ || (out && *out >= global_step_)) return;
    grants = tokens_.Advance(global_step_);
  }
  Send(std::move(grants));
}

void SyncCoordinator::Close() {
  std::vector<TokenGrant> grants;
  {
    MutexLock lock(mu_);
    closed_ = true;
    grants = tokens_.Close();
  }
  Send(std::move(grants));
}

int64_t SyncCoordinator::global_step() const {
  MutexLock lock(mu_);
  return global_step_;
}

}  // namespace pst
