#include "ps/replica_router.h"

#include <glog/logging.h>

#include <algorithm>
#include <random>
#include <thread>

namespace pst {
namespace {

uint64_t RandomIncarnation() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device() ^ 1;  // never 0
}

}  // namespace

bool IsRoutingError(const Status& status) {
  switch (status.code()) {
    case Code::kFailedPrecondition:  // not the primary of that epoch, or no replica
    case Code::kAborted:             // initialized again while the push waited
    case Code::kUnavailable:         // the ps is stopping
      return true;
    default: return false;
  }
}

ReplicaRouter::ReplicaRouter(RouteSource* source, int worker, WhenRefused when_refused)
    : source_(source),
      worker_(worker),
      when_refused_(when_refused),
      incarnation_(RandomIncarnation()) {}

Status ReplicaRouter::Refresh() {
  PST_ASSIGN_OR_RETURN(std::vector<ShardChain> chains, source_->FetchRoutes());
  for (size_t k = 0; k < chains.size(); ++k) {
    if (chains[k].shard != static_cast<int>(k)) {
      return Internal("the routes name shard " + std::to_string(chains[k].shard) + " in place " +
                      std::to_string(k));
    }
  }
  chains_ = std::move(chains);
  last_ids_.resize(chains_.size());
  return Status::OK();
}

StatusOr<std::vector<ShardChain>> ReplicaRouter::Chains() {
  PST_RETURN_IF_ERROR(Refresh());
  return chains_;
}

PushId ReplicaRouter::NextPushId(int shard) {
  if (static_cast<size_t>(shard) >= last_ids_.size()) last_ids_.resize(shard + 1);
  LastId& last = last_ids_[shard];
  if (last.push == pushes_started_) {
    ++last.part;
  } else {
    last = LastId{last.sequence + 1, 0, pushes_started_};
  }
  return PushId{worker_, incarnation_, last.sequence, last.part};
}

OutgoingMessage ReplicaRouter::Routed(const OutgoingMessage& message, int shard, int64_t epoch) {
  OutgoingMessage routed = message;
  routed.extras = [inner = message.extras, shard, epoch](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras = inner ? inner(fbb) : HeaderExtras();
    extras.replica = wire::CreateReplicaRoute(fbb, shard, epoch);
    return extras;
  };
  return routed;
}

Status ReplicaRouter::SendOne(const std::vector<Connection*>& channels, size_t i, bool again,
                              Calls* calls) {
  const Request& r = calls->requests_[i];
  if (r.shard < 0 || static_cast<size_t>(r.shard) >= chains_.size()) {
    return Internal("no route to shard " + std::to_string(r.shard));
  }
  const ShardChain& chain = chains_[r.shard];
  Connection* channel = channels[chain.primary];
  PST_ASSIGN_OR_RETURN(uint64_t id, channel->Send(Routed(*r.message, r.shard, chain.epoch)));
  if (again) {
    calls->pending_.Redirect(i, channel, id);
    calls->sent_by_[i] = chain;
  } else {
    calls->pending_.Add(channel, id);
    calls->sent_by_.push_back(chain);
  }
  return Status::OK();
}

Status ReplicaRouter::Send(const std::vector<Connection*>& channels,
                           const std::vector<Request>& requests, Calls* calls) {
  if (chains_.empty()) PST_RETURN_IF_ERROR(Refresh());
  for (const Request& r : requests) {
    calls->requests_.push_back(r);
    PST_RETURN_IF_ERROR(SendOne(channels, calls->requests_.size() - 1, false, calls));
  }
  return Status::OK();
}

Status ReplicaRouter::Wait(const std::vector<Connection*>& channels, Calls* calls,
                           const std::vector<bool>& needed, MonotonicClock::TimePoint deadline,
                           const std::atomic<bool>* interrupt) {
  PendingCalls& pending = calls->pending_;
  const size_t n = calls->requests_.size();
  auto is_needed = [&](size_t i) { return needed.empty() || needed[i]; };
  Status last_error;
  for (;;) {
    const auto check = std::min(deadline, SteadyClock().Now() + kRouteCheck);
    PST_ASSIGN_OR_RETURN(const size_t missing, pending.WaitSome(check, interrupt, needed));
    bool refused = false;
    for (size_t i = 0; i < n; ++i) {
      if (!is_needed(i) || !pending.answered(i) || pending.status(i).ok()) continue;
      if (!IsRoutingError(pending.status(i))) return pending.status(i);
      refused = true;
      last_error = pending.status(i);
    }
    if (missing == 0 && !refused) break;
    const bool fail_if_unchanged = refused && when_refused_ == WhenRefused::kFail;
    if (SteadyClock().Now() >= deadline) {
      return last_error.ok() ? DeadlineExceeded(
                                   "no reply from the shards' primaries before "
                                   "the deadline, and no new route")
                             : last_error;
    }
    // The chief's change is coming (unless this is the chief's own client).
    if (missing == 0 && !fail_if_unchanged) std::this_thread::sleep_for(kRouteCheck);
    if (Status fetched = Refresh(); !fetched.ok()) {
      if (fail_if_unchanged) return last_error;
      LOG_EVERY_N(WARNING, 20) << "asking for the shards' routes: " << fetched.ToString();
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      // Waiting: not answered, or refused by a replica that is no primary.
      const bool refused_here = pending.answered(i) && IsRoutingError(pending.status(i));
      const bool waiting = !pending.answered(i) || refused_here;
      const ShardChain& now = chains_[calls->requests_[i].shard];
      const ShardChain& before = calls->sent_by_[i];
      const bool unchanged = now.epoch == before.epoch && now.primary == before.primary;
      if (refused_here && unchanged && is_needed(i) && when_refused_ == WhenRefused::kFail) {
        return pending.status(i);
      }
      // Refused under routes that did not change: the replica may not have
      // adopted the chain the routes name yet (the chief tells the
      // replicas and the workers at once), so ask it again. Sending a push
      // again is safe: its id makes it apply once.
      if (!waiting || (unchanged && !refused_here)) continue;
      if (unchanged) {
        LOG_EVERY_N(INFO, 20) << "shard " << now.shard << ": sent again to ps:" << now.primary
                              << " (epoch " << now.epoch
                              << "), which refused it: " << pending.status(i).message();
      } else {
        LOG(INFO) << "shard " << now.shard << ": routed again to ps:" << now.primary << " (epoch "
                  << now.epoch << ")";
      }
      pending.Reopen(i);
      PST_RETURN_IF_ERROR(SendOne(channels, i, true, calls));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (is_needed(i)) *calls->requests_[i].reply = std::move(pending.replies()[i]);
  }
  return Status::OK();
}

Status ReplicaRouter::Call(const std::vector<Connection*>& channels,
                           const std::vector<Request>& requests, MonotonicClock::TimePoint deadline,
                           const std::atomic<bool>* interrupt) {
  Calls calls;
  PST_RETURN_IF_ERROR(Send(channels, requests, &calls));
  return Wait(channels, &calls, {}, deadline, interrupt);
}

}  // namespace pst
