// ShardChains: the chief's record of every shard's replicas under
// --ps_replicas=R, and its decisions on them (docs/DESIGN.md, "Replicated
// shards"): who is promoted when a ps is lost, which chains a ps that comes
// back joins, and when a shard is lost whole.
//
// Shard k's home replicas are ps tasks k, k+1, ..., k+R-1 (mod P); at the
// start k is the primary and the others its backups, at epoch 1. Every
// change of a chain raises its epoch by one, so the epochs fence the old
// primary of every change (ps/replication/replica_role.h).
//
// Decisions only: the shard keeper sends the chains and initializes the
// replicas.
// Thread safety: none; the chief's main thread.
#ifndef PST_CHIEF_REPLICATION_SHARD_CHAINS_H_
#define PST_CHIEF_REPLICATION_SHARD_CHAINS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ps/replication/replica_role.h"

namespace pst {

// The ps task indices holding shard `shard` of `num_ps` with `replicas`
// replicas each: shard, shard+1, ... (mod num_ps), primary first.
std::vector<int> HomeReplicas(int shard, int num_ps, int replicas);

struct ChainChange {
  std::vector<ShardChain> changed;  // the chains to send to their replicas
  std::vector<int> lost_shards;     // no replica left: only a checkpoint has them
};

class ShardChains {
 public:
  // One shard per ps task; 1 <= replicas <= num_ps.
  ShardChains(int num_ps, int replicas);

  int num_shards() const { return static_cast<int>(chains_.size()); }
  int replicas() const { return replicas_; }
  const ShardChain& chain(int shard) const { return chains_[shard]; }
  const std::vector<ShardChain>& chains() const { return chains_; }
  // Backups promoted to primary so far.
  int64_t promotions() const { return promotions_; }

  // ps task `task` was lost: it leaves every chain it is in; where it was
  // the primary its first filled backup is promoted. A shard without a
  // filled backup left is lost (its chain is left as it was, for ResetAll):
  // a backup still waiting for its first shipment holds nothing of it.
  ChainChange TaskLost(int task);
  // ps task `task` runs again (restarted empty): it joins, as the last
  // backup, the chain of every shard it is a home replica of and is not in.
  // It is not filled until Filled() says so (the primary's next shipment
  // fills it). Lost shards are not changed: they come back through ResetAll.
  ChainChange TaskBack(int task);
  // ps task `task` reports that its replica of `shard` holds the primary's
  // state of `epoch` (ReplicaLoad::filled_at_epoch): a backup that joined
  // at or before that epoch is filled from now on.
  void Filled(int shard, int task, int64_t epoch);
  // Every shard restored from a checkpoint onto its home replicas: each
  // chain is its home chain again, at an epoch above every one before.
  ChainChange ResetAll();
  // A restarted chief takes over the chains the running ps hold (one per
  // shard, in shard order; FindRunningChains). Their backups count as
  // filling until Filled() says otherwise.
  void Adopt(const std::vector<ShardChain>& running);

  // One line per shard: ShardChain::Describe().
  std::string Describe() const;

 private:
  bool Lost(int shard) const;

  const int num_ps_;
  const int replicas_;
  std::vector<ShardChain> chains_;
  std::vector<bool> lost_;
  // Per shard: backups that joined and are not filled yet, with the epoch
  // they joined at. The home chains start filled (initialized alike).
  std::vector<std::map<int, int64_t>> filling_;
  int64_t promotions_ = 0;
};

}  // namespace pst

#endif  // PST_CHIEF_REPLICATION_SHARD_CHAINS_H_
