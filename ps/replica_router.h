// ReplicaRouter: where a PsClient sends each shard's requests under
// --ps_replicas (docs/DESIGN.md, "Replicated shards"): to the shard's
// primary, stamped with the epoch of the chain it was routed by, as the
// chief last said (RouteSource). A request that finds no primary there (the
// task was lost, or was deposed, or restarted empty) or no answer within a
// route check is sent again once the chief names a new chain for its shard;
// a push carries its id, so a primary that holds it already acknowledges
// it without applying it twice.
//
// Thread safety: none; owned by one PsClient.
#ifndef PST_PS_REPLICA_ROUTER_H_
#define PST_PS_REPLICA_ROUTER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "ps/replication/push_ledger.h"
#include "ps/replication/replica_role.h"
#include "transport/transport.h"

namespace pst {

// Every shard's chain, from the chief (a worker asks it; the chief knows).
class RouteSource {
 public:
  virtual ~RouteSource() = default;
  virtual StatusOr<std::vector<ShardChain>> FetchRoutes() = 0;
};

// What a request refused by a replica that is no primary (lost, deposed,
// restarted empty) does while the routes say the same.
enum class WhenRefused {
  kWaitForNewRoutes,  // a worker: the chief is changing them
  kFail,              // the chief's own client: only its caller changes them, so waiting is in vain
};

class ReplicaRouter {
 public:
  // How long a request may go unanswered before the routes are asked again.
  static constexpr std::chrono::milliseconds kRouteCheck{250};

  // `source` is borrowed; `worker`: the pushes' worker index.
  ReplicaRouter(RouteSource* source, int worker,
                WhenRefused when_refused = WhenRefused::kWaitForNewRoutes);

  // The chains as the source says them now (fetched again: for the
  // requests that reach every replica, which the chief sends).
  StatusOr<std::vector<ShardChain>> Chains();
  // The requests from now on belong to a new push.
  void StartPush() { ++pushes_started_; }
  // The id of the next request of the current push to `shard`: the shard's
  // next sequence for the push's first request there, the next part after.
  PushId NextPushId(int shard);

  // One request to one shard, answered into *reply.
  struct Request {
    int shard = 0;
    const OutgoingMessage* message = nullptr;
    ReceivedMessage* reply = nullptr;
  };
  // Requests in flight to the shards' primaries, kept across waits: a
  // worker's push stays in flight while it waits for the pull sent behind
  // it (PsClient::StartPushThenPull).
  class Calls {
   private:
    friend class ReplicaRouter;
    std::vector<Request> requests_;
    PendingCalls pending_;
    std::vector<ShardChain> sent_by_;  // the chain each request was routed by
  };

  // Sends each request to its shard's primary over channels[task],
  // stamped with its chain's epoch, and adds it to *calls.
  Status Send(const std::vector<Connection*>& channels, const std::vector<Request>& requests,
              Calls* calls);
  // Waits until `deadline` for the reply of every call of *calls with
  // needed[i] (all when empty), routing again as the class comment says
  // (the others too, which stay in flight), and moves each reply into its
  // Request::reply. A reply's error other than a routing one is returned
  // as it is.
  Status Wait(const std::vector<Connection*>& channels, Calls* calls,
              const std::vector<bool>& needed, MonotonicClock::TimePoint deadline,
              const std::atomic<bool>* interrupt);
  // Send, then Wait for every reply.
  Status Call(const std::vector<Connection*>& channels, const std::vector<Request>& requests,
              MonotonicClock::TimePoint deadline, const std::atomic<bool>* interrupt);

  // `message` with Header.replica naming `shard` at `epoch`.
  static OutgoingMessage Routed(const OutgoingMessage& message, int shard, int64_t epoch);

 private:
  Status Refresh();
  // Sends calls->requests_[i] to its primary now (`again`: it was sent before).
  Status SendOne(const std::vector<Connection*>& channels, size_t i, bool again, Calls* calls);

  RouteSource* const source_;
  const int worker_;
  const WhenRefused when_refused_;
  const uint64_t incarnation_;  // random, per process start
  // Per shard: the last push id given, and the push it belongs to.
  struct LastId {
    uint64_t sequence = 0;
    uint32_t part = 0;
    uint64_t push = UINT64_MAX;  // pushes_started_ then (none yet)
  };
  std::vector<LastId> last_ids_;
  uint64_t pushes_started_ = 0;
  std::vector<ShardChain> chains_;  // by shard
};

// True for the errors that a request routed to a replica that is not (or
// no longer) the shard's primary gets.
bool IsRoutingError(const Status& status);

}  // namespace pst

#endif  // PST_PS_REPLICA_ROUTER_H_
