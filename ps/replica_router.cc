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

ReplicaRouter::ReplicaRouter(RouteSource* source, int worker)
    : source_(source), worker_(worker), incarnation_(RandomIncarnation()) {}

Status ReplicaRouter::Refresh() {
  PST_ASSIGN_OR_RETURN(std::vector<ShardChain> chains, source_->FetchRoutes());
  for (size_t k = 0; k < chains.size(); ++k) {
    if (chains[k].shard != static_cast<int>(k)) {
      return Internal("the routes name shard " + std::to_string(chains[k].shard) + " in place " +
                      std::to_string(k));
    }
  }
  chains_ = std::move(chains);
  sequences_.resize(chains_.size(), 0);
  return Status::OK();
}

StatusOr<std::vector<ShardChain>> ReplicaRouter::Chains() {
  PST_RETURN_IF_ERROR(Refresh());
  return chains_;
}

PushId ReplicaRouter::NextPushId(int shard) {
  if (static_cast<size_t>(shard) >= sequences_.size()) sequences_.resize(shard + 1, 0);
  return PushId{worker_, incarnation_, ++sequences_[shard]};
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

Status ReplicaRouter::Call(const std::vector<Connection*>& channels,
                           const std::vector<Request>& requests, MonotonicClock::TimePoint deadline,
                           const std::atomic<bool>* interrupt) {
  if (chains_.empty()) PST_RETURN_IF_ERROR(Refresh());
  PendingCalls calls;
  std::vector<ShardChain> sent_by;  // the chain each call was routed by
  auto send = [&](size_t i, bool again) -> Status {
    const Request& r = requests[i];
    if (r.shard < 0 || static_cast<size_t>(r.shard) >= chains_.size()) {
      return Internal("no route to shard " + std::to_string(r.shard));
    }
    Connection* channel = channels[chains_[r.shard].primary];
    PST_ASSIGN_OR_RETURN(uint64_t id,
                         channel->Send(Routed(*r.message, r.shard, chains_[r.shard].epoch)));
    if (again) {
      calls.Redirect(i, channel, id);
      sent_by[i] = chains_[r.shard];
    } else {
      calls.Add(channel, id);
      sent_by.push_back(chains_[r.shard]);
    }
    return Status::OK();
  };
  for (size_t i = 0; i < requests.size(); ++i) PST_RETURN_IF_ERROR(send(i, false));
  Status last_error;
  for (;;) {
    const auto check = std::min(deadline, SteadyClock().Now() + kRouteCheck);
    PST_ASSIGN_OR_RETURN(const size_t missing, calls.WaitSome(check, interrupt));
    bool refused = false;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!calls.answered(i) || calls.status(i).ok()) continue;
      if (!IsRoutingError(calls.status(i))) return calls.status(i);
      refused = true;
      last_error = calls.status(i);
    }
    if (missing == 0 && !refused) break;
    if (SteadyClock().Now() >= deadline) {
      return last_error.ok() ? DeadlineExceeded(
                                   "no reply from the shards' primaries before "
                                   "the deadline, and no new route")
                             : last_error;
    }
    if (missing == 0) std::this_thread::sleep_for(kRouteCheck);  // the chief's change is coming
    if (Status fetched = Refresh(); !fetched.ok()) {
      LOG_EVERY_N(WARNING, 20) << "asking for the shards' routes: " << fetched.ToString();
      continue;
    }
    for (size_t i = 0; i < requests.size(); ++i) {
      const bool waiting = !calls.answered(i) || !calls.status(i).ok();
      const ShardChain& now = chains_[requests[i].shard];
      if (!waiting || (now.epoch == sent_by[i].epoch && now.primary == sent_by[i].primary)) {
        continue;
      }
      LOG(INFO) << "shard " << now.shard << ": routed again to ps:" << now.primary << " (epoch "
                << now.epoch << ")";
      calls.Reopen(i);
      PST_RETURN_IF_ERROR(send(i, true));
    }
  }
  for (size_t i = 0; i < requests.size(); ++i) *requests[i].reply = std::move(calls.replies()[i]);
  return Status::OK();
}

}  // namespace pst
