#include "scheduler/sync_coordinator.h"

#include <algorithm>

namespace pst {

SyncCoordinator::SyncCoordinator(std::vector<int> sync_shards, int num_workers,
                                 int64_t train_steps, RpcServer* server)
    : train_steps_(train_steps), server_(server), tokens_(num_workers) {
  const int shards = sync_shards.empty() ? 0 : *std::max_element(sync_shards.begin(), sync_shards.end()) + 1;
  applied_.assign(shards, -1);
  for (int k : sync_shards) applied_[k] = 0;
}

OutgoingMessage SyncCoordinator::TokenReply(int64_t step) {
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
  for (TokenGrant& g : grants) server_->SendDeferred(std::move(g.to), TokenReply(g.step));
}

void SyncCoordinator::Open(int64_t step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    global_step_ = step;
    for (int64_t& a : applied_) {
      if (a >= 0) a = step;
    }
  }
  Send(tokens_.Reset(step));
}

OutgoingMessage SyncCoordinator::HandleTokenRequest(int worker, RequestContext& context) {
  std::optional<int64_t> step = tokens_.TakeOrPark(worker, context);
  // Parked: the return value is ignored. Closed and not parked: stop.
  return TokenReply(step.value_or(-1));
}

void SyncCoordinator::ShardApplied(int shard, int64_t step) {
  int64_t advanced_to = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shard < 0 || shard >= static_cast<int>(applied_.size()) || applied_[shard] < 0) {
      LOG(WARNING) << "step notice from ps:" << shard << ", which holds no trainable variable";
      return;
    }
    applied_[shard] = std::max(applied_[shard], step + 1);
    int64_t slowest = std::numeric_limits<int64_t>::max();
    for (int64_t a : applied_) {
      if (a >= 0) slowest = std::min(slowest, a);
    }
    if (slowest > global_step_) advanced_to = global_step_ = slowest;
  }
  if (advanced_to < 0) return;
  if (advanced_to >= train_steps_) {
    Close();
  } else {
    Send(tokens_.Advance(advanced_to));
  }
}

void SyncCoordinator::Close() { Send(tokens_.Close()); }

int64_t SyncCoordinator::global_step() const {
  std::lock_guard<std::mutex> lock(mu_);
  return global_step_;
}

}  // namespace pst
