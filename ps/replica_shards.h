// ReplicaShards: the shard replicas a ps task holds under --ps_replicas
// (docs/DESIGN.md, "Replicated shards"). Each is a store (a Container, so
// the service's handlers serve it like any other), its role in the shard's
// chain, and the replicator that ships its state to the backups while it
// is the primary. Requests name the replica in Header.replica; a ps of an
// unreplicated cluster holds none.
//
// Thread safety: every method may be called concurrently.
#ifndef PST_PS_REPLICA_SHARDS_H_
#define PST_PS_REPLICA_SHARDS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "ps/container.h"
#include "ps/replication/replica_role.h"
#include "ps/replication/replicator.h"

namespace pst {

struct Replica {
  // `shipper` ships this replica's state while it is the primary.
  Replica(int shard, int self, std::unique_ptr<BackupShipper> shipper);
  ~Replica();

  const int shard;
  Container container;
  mutable Mutex mu;
  ReplicaRole role GUARDED_BY(mu);
  uint64_t shipments_taken GUARDED_BY(mu) = 0;  // as a backup
  int64_t filled_at_epoch GUARDED_BY(mu) = 0;   // of the last shipment taken; 0: none
  const std::unique_ptr<BackupShipper> shipper;
  std::unique_ptr<Replicator> replicator;  // built last, stopped first
};

// What ShardStatus and /metrics say about one replica.
struct ReplicaLoad {
  int shard = 0;
  int64_t epoch = 0;
  bool primary = false;
  bool deposed = false;
  uint64_t rounds = 0;         // as the primary: shipments to every backup
  uint64_t bytes_shipped = 0;  // as the primary
  uint64_t shipments_taken = 0;
  int64_t filled_at_epoch = 0;  // a backup holds its primary's state of this epoch
  std::vector<int> backups;     // the chain it holds at `epoch`: its backups, in order
};

class ReplicaShards {
 public:
  // A shipper speaking for `cluster_id` (the replica's job).
  using ShipperFactory = std::function<std::unique_ptr<BackupShipper>(uint64_t cluster_id)>;
  // `self`: this ps task's index.
  ReplicaShards(int self, ShipperFactory shippers) : self_(self), shippers_(std::move(shippers)) {}

  // The chief's init of this task's replica of `shard`: a fresh replica
  // with no chain yet (one held before goes: what its pushes wait for
  // fails).
  Status Initialize(int shard, const ShardConfig& config,
                    std::vector<std::pair<std::string, Tensor>> values,
                    const std::vector<EmbeddingTableConfig>& tables, uint64_t cluster_id);
  // The replica of `shard` whatever its role (the chief's requests);
  // FailedPrecondition when this task holds none (it restarted empty).
  StatusOr<std::shared_ptr<Replica>> Find(int shard) const;
  // The replica of `shard` when this task is its primary at `epoch` (a
  // worker's request); FailedPrecondition saying who is otherwise.
  StatusOr<std::shared_ptr<Replica>> FindPrimary(int shard, int64_t epoch) const;
  // The chief's chain for `chain.shard` (ReplicaRole::Adopt): as its
  // primary the replica ships to the chain's backups from now on; as a
  // backup, what waited on it as the primary fails.
  Status Adopt(const ShardChain& chain);
  // State of `shard` shipped by ps task `sender` at `epoch`
  // (ReplicaRole::CheckShipment), restored into the replica.
  Status TakeShipment(int sender, int shard, int64_t epoch, const NamedTensors& state);

  // Drops every replica; their replicators stop (what waits is never
  // answered). For a ps that stops serving, before its server goes.
  void StopAll();

  bool empty() const;
  std::vector<ReplicaLoad> Loads() const;

 private:
  const int self_;
  const ShipperFactory shippers_;
  mutable Mutex mu_;
  std::map<int, std::shared_ptr<Replica>> replicas_ GUARDED_BY(mu_);  // by shard
};

}  // namespace pst

#endif  // PST_PS_REPLICA_SHARDS_H_
