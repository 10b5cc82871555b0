// ReplicaKeeper: keeps every shard's chain whole for the chief under
// --ps_replicas (docs/DESIGN.md, "Replicated shards"). It looks at every ps
// task; when one is lost it takes it out of its chains (promoting a backup
// where it was the primary: no rollback) and sends the changed chains;
// when one runs again (restarted empty, or back from a stall) it
// initializes its replicas and puts it back into its home chains as a
// backup, which its primaries then fill. The decisions are ShardChains'.
//
// Ownership: borrows the ps client and the routes board.
// Thread safety: none; the chief's main thread.
#ifndef PST_CHIEF_REPLICATION_REPLICA_KEEPER_H_
#define PST_CHIEF_REPLICATION_REPLICA_KEEPER_H_

#include <chrono>
#include <functional>
#include <vector>

#include "chief/replication/routes_board.h"
#include "chief/replication/running_chains.h"
#include "chief/replication/shard_chains.h"
#include "common/status.h"
#include "ps/shard_admin.h"

namespace pst {

class ReplicaKeeper {
 public:
  // Initializes the replicas ps task `task` holds in the published chains.
  using InitializeTask = std::function<Status(int task)>;

  // Publishes the home chains (ShardChains).
  ReplicaKeeper(int num_ps, int replicas, ShardAdmin* ps, RoutesBoard* board,
                InitializeTask initialize_task);

  // Sends every chain to its replicas (after they were initialized).
  Status SendAll(std::chrono::milliseconds patience);
  // Looks at every ps task, each within `patience` (a task already lost:
  // a tenth of it), and repairs the chains as the class comment says (a
  // task back whose replicas cannot be initialized stays out). Returns the
  // shards lost whole (every replica gone): only a checkpoint has them. A
  // shard lost whole is returned by every Repair until ResetAll, not only
  // by the one that saw it go (its caller may not be the one restoring).
  StatusOr<std::vector<int>> Repair(std::chrono::milliseconds patience);
  // The ps task serving shard `shard` now.
  int PrimaryOf(int shard) const { return chains_.chain(shard).primary; }
  // Every chain back to its home replicas at a new epoch, published (the
  // shards were initialized again: SendAll follows).
  void ResetAll();
  // A restarted chief: takes over and publishes the chains the running ps
  // hold (FindRunningChains) and sends those it changed, each within
  // `patience`. A home replica left out of them (lost, and not back under
  // the chief before this one) counts as lost: the next Repair puts it back
  // when it answers.
  void Adopt(const RunningChains& running, std::chrono::milliseconds patience);

  const ShardChains& chains() const { return chains_; }
  // The ps tasks taken out of the chains and not back yet.
  int lost_tasks() const;

 private:
  // True when `status` (of task `task`) holds a configured replica of every
  // shard whose chain names the task.
  bool HoldsItsReplicas(int task, const ShardStatus& status) const;
  // Publishes the chains and sends `change` to the tasks it names (errors
  // logged: a task lost meanwhile is seen by the next Repair).
  void Apply(const ChainChange& change, const std::string& why, std::chrono::milliseconds patience);

  ShardChains chains_;
  ShardAdmin* const ps_;
  RoutesBoard* const board_;
  const InitializeTask initialize_task_;
  std::vector<bool> lost_;
  std::vector<int> lost_whole_;  // shards with no replica left, until ResetAll
};

}  // namespace pst

#endif  // PST_CHIEF_REPLICATION_REPLICA_KEEPER_H_
