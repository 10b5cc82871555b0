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

class ReplicaRouter {
 public:
  // How long a request may go unanswered before the routes are asked again.
  static constexpr std::chrono::milliseconds kRouteCheck{250};

  // `source` is borrowed; `worker`: the pushes' worker index.
  ReplicaRouter(RouteSource* source, int worker);

  // The chains as the source says them now (fetched again: for the
  // requests that reach every replica, which the chief sends).
  StatusOr<std::vector<ShardChain>> Chains();
  // A push id for the next push to `shard`.
  PushId NextPushId(int shard);

  // One request to one shard, answered into *reply.
  struct Request {
    int shard = 0;
    const OutgoingMessage* message = nullptr;
    ReceivedMessage* reply = nullptr;
  };
  // Sends each request to its shard's primary over channels[task] and
  // waits until `deadline` for every reply, routing again as the class
  // comment says. A reply's error other than a routing one is returned
  // as it is.
  Status Call(const std::vector<Connection*>& channels, const std::vector<Request>& requests,
              MonotonicClock::TimePoint deadline, const std::atomic<bool>* interrupt);

  // `message` with Header.replica naming `shard` at `epoch`.
  static OutgoingMessage Routed(const OutgoingMessage& message, int shard, int64_t epoch);

 private:
  Status Refresh();

  RouteSource* const source_;
  const int worker_;
  const uint64_t incarnation_;       // random, per process start
  std::vector<uint64_t> sequences_;  // per shard: the last push id's
  std::vector<ShardChain> chains_;   // by shard
};

// True for the errors that a request routed to a replica that is not (or
// no longer) the shard's primary gets.
bool IsRoutingError(const Status& status);

}  // namespace pst

#endif  // PST_PS_REPLICA_ROUTER_H_
