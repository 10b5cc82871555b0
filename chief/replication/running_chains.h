// FindRunningChains: the chains a restarted chief finds on the running ps
// tasks under --ps_replicas, from what each task reports of its replicas
// (ReplicaLoad: the chain each holds). A plain decision.
//
// A shard's chain is the one its primary holds: the replica that says it is
// the primary, not deposed, at the highest epoch. Its backups are those it
// names that hold the shard at that epoch, not deposed (one still waiting for
// its first shipment counts: the chief learns when it is filled). When no
// live replica is the primary (it was lost just before the chief, which had
// no time to promote a backup), the first backup holding its primary's state
// of the chain's epoch is promoted, as the chief would have. A chain that
// lost a member or promoted one is a new chain, one epoch up, in `changed`:
// the chief sends it. Otherwise (no replica of a shard, or no filled backup
// where the primary is gone) there are no running chains, and `why` says
// which shard; it is empty when no task holds any replica (a first start).
#ifndef PST_CHIEF_REPLICATION_RUNNING_CHAINS_H_
#define PST_CHIEF_REPLICATION_RUNNING_CHAINS_H_

#include <string>
#include <vector>

#include "ps/replica_shards.h"
#include "ps/replication/replica_role.h"

namespace pst {

struct RunningChains {
  std::vector<ShardChain> chains;   // one per shard, in shard order, when found
  std::vector<ShardChain> changed;  // of chains, those to send: one epoch up
  std::string why;                  // empty when found
};

// by_task[t]: the replicas ps task t reports (none for a task that did not
// answer).
RunningChains FindRunningChains(const std::vector<std::vector<ReplicaLoad>>& by_task,
                                int num_shards);

}  // namespace pst

#endif  // PST_CHIEF_REPLICATION_RUNNING_CHAINS_H_
