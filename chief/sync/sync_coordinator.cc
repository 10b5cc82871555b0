#include "chief/sync/sync_coordinator.h"

#include <algorithm>
#include <limits>

#include "common/clock.h"

namespace pst {

SyncCoordinator::SyncCoordinator(std::vector<int> sync_shards, int num_workers, int64_t train_steps,
                                 ReplySender* replies, SyncReplicas replicas)
    : train_steps_(train_steps),
      replies_(replies),
      tokens_(num_workers),
      clock_(*replicas.clock),
      replicas_(replicas.fixed > 0 ? replicas.fixed : num_workers) {
  if (replicas.fixed == 0) adaptive_.emplace(num_workers, replicas.window);
  const int shards =
      sync_shards.empty() ? 0 : *std::max_element(sync_shards.begin(), sync_shards.end()) + 1;
  applied_.assign(shards, -1);
  for (int k : sync_shards) applied_[k] = 0;
}

OutgoingMessage TokenReply(int64_t step, int replicas) {
  OutgoingMessage reply;
  reply.type = wire::MessageType::TokenReply;
  reply.step = step;
  const wire::ClusterState state =
      step < 0 ? wire::ClusterState::Stopping : wire::ClusterState::Training;
  reply.extras = [state, replicas](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, 0, state, 0, 0, replicas);
    return extras;
  };
  return reply;
}

void SyncCoordinator::Send(std::vector<TokenGrant> grants, int replicas) {
  for (TokenGrant& g : grants) {
    replies_->SendDeferred(std::move(g.to), TokenReply(g.step, replicas));
  }
}

void SyncCoordinator::StepOpens(int64_t step) {
  if (!adaptive_) return;
  const int n = adaptive_->StepOpened(step, clock_.Now());
  if (n == replicas_) return;
  LOG(INFO) << "replicas_to_aggregate=auto: step " << step << " aggregates " << n
            << " gradients (was " << replicas_ << "): expected " << adaptive_->ExpectedRate(n)
            << " batches/s against " << adaptive_->ExpectedRate(replicas_);
  replicas_ = n;
}

void SyncCoordinator::Open(int64_t step) {
  std::vector<TokenGrant> grants;
  int replicas;
  {
    MutexLock lock(mu_);
    global_step_ = step;
    paused_ = false;
    closed_ = false;
    for (int64_t& a : applied_) {
      if (a >= 0) a = step;
    }
    if (adaptive_) adaptive_->Forget();
    StepOpens(step);
    replicas = replicas_;
    grants = tokens_.Reset(step);
  }
  Send(std::move(grants), replicas);
}

OutgoingMessage SyncCoordinator::HandleTokenRequest(int worker, int64_t last_received,
                                                    RequestContext& context) {
  MutexLock lock(mu_);
  // The request that follows a worker's push of step `last_received`.
  if (adaptive_ && last_received >= 0) {
    adaptive_->GradientArrived(worker, last_received, clock_.Now());
  }
  std::optional<int64_t> step = tokens_.TakeOrPark(worker, last_received, context);
  // Parked: the return value is ignored. Closed and not parked: stop.
  return TokenReply(step.value_or(-1), replicas_);
}

void SyncCoordinator::ShardApplied(int shard, int64_t step) {
  std::vector<TokenGrant> grants;
  int replicas;
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
    if (global_step_ < train_steps_ && !paused_) {
      StepOpens(global_step_);
      grants = tokens_.Advance(global_step_);
    }
    replicas = replicas_;
  }
  Send(std::move(grants), replicas);
}

StatusOr<int64_t> SyncCoordinator::Pause(MonotonicClock::TimePoint deadline) {
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
  int replicas;
  {
    MutexLock lock(mu_);
    paused_ = false;
    const std::optional<int64_t> out = tokens_.current_step();
    if (global_step_ >= train_steps_ || (out && *out >= global_step_)) return;
    StepOpens(global_step_);
    grants = tokens_.Advance(global_step_);
    replicas = replicas_;
  }
  Send(std::move(grants), replicas);
}

void SyncCoordinator::Close() {
  std::vector<TokenGrant> grants;
  {
    MutexLock lock(mu_);
    closed_ = true;
    grants = tokens_.Close();
  }
  Send(std::move(grants), 0);
}

int64_t SyncCoordinator::global_step() const {
  MutexLock lock(mu_);
  return global_step_;
}

int SyncCoordinator::replicas() const {
  MutexLock lock(mu_);
  return replicas_;
}

}  // namespace pst
