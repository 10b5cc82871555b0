// ReplicaRole: what one ps task is for one shard under --ps_replicas, and
// the fencing that keeps a deposed primary from writing (docs/DESIGN.md,
// "Replicated shards").
//
// The chief owns every shard's chain (its primary and backups, as ps task
// indices) and raises the shard's epoch at each change. Every replica is
// told the chain; requests carry the epoch they were routed by:
// - a worker's request is served by the primary of the request's epoch only;
// - shipped state is taken by a backup from the primary of its own epoch
//   only; a shipment of an older epoch is refused (Aborted), and the
//   sender, learning so that it was deposed, stops serving (Depose);
// - a chain older than the one held is refused (a late chief message).
//
// Decisions only: the ps service carries them out.
// Thread safety: none; the ps service guards it.
#ifndef PST_PS_REPLICATION_REPLICA_ROLE_H_
#define PST_PS_REPLICATION_REPLICA_ROLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

// A shard's chain as the chief sets it: ps task indices.
struct ShardChain {
  int shard = 0;
  int64_t epoch = 0;
  int primary = 0;
  std::vector<int> backups;  // in chain order
  // "shard 2 epoch 3: primary ps:0, backups ps:1"
  std::string Describe() const;
  // The primary, then the backups.
  std::vector<int> Tasks() const;
  // True when `task` is the primary or a backup.
  bool Names(int task) const;
};

class ReplicaRole {
 public:
  // `self`: this ps task's index. Before the first chain it serves nobody.
  explicit ReplicaRole(int self) : self_(self) {}

  // The chief's chain for this shard: OK and adopted when its epoch is at
  // least the one held (the same epoch again is a repeat); FailedPrecondition
  // for an older one, or one that does not name this task.
  Status Adopt(const ShardChain& chain);
  // A worker's request routed by `epoch`: OK when this task is the primary
  // at that epoch. FailedPrecondition otherwise, naming the primary this
  // task knows of, so the worker asks the chief for the routes again.
  Status CheckClientRequest(int64_t epoch) const;
  // State shipped by ps task `sender` at `epoch`: OK when this task is a
  // backup and `sender` its primary at that epoch. A sender of an older
  // epoch gets Aborted (it was deposed) unless the newer chain keeps it the
  // primary; that, and a newer epoch than this task knows, is Unavailable
  // (a chain is on its way to one of them: ship again).
  Status CheckShipment(int sender, int64_t epoch) const;
  // A backup refused this primary's shipment as of an older epoch: it
  // serves no more until the chief gives it a newer chain.
  void Depose() { deposed_ = true; }

  bool configured() const { return configured_; }
  bool primary() const { return configured_ && !deposed_ && chain_.primary == self_; }
  bool deposed() const { return deposed_; }
  int64_t epoch() const { return chain_.epoch; }
  const ShardChain& chain() const { return chain_; }

 private:
  const int self_;
  bool configured_ = false;
  bool deposed_ = false;
  ShardChain chain_;
};

}  // namespace pst

#endif  // PST_PS_REPLICATION_REPLICA_ROLE_H_
