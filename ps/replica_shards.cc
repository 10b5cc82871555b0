#include "ps/replica_shards.h"

#include <glog/logging.h>

namespace pst {
namespace {

std::string ShardName(int shard) { return "shard " + std::to_string(shard); }

}  // namespace

Replica::Replica(int shard_index, int self, std::unique_ptr<BackupShipper> shipper_of_shard)
    : shard(shard_index),
      container(""),
      role(self),
      shipper(std::move(shipper_of_shard)),
      replicator(std::make_unique<Replicator>(
          shard, shipper.get(), [this] { return container.store.ReplicationSnapshot(); },
          [this] { return container.store.ReplicationWatermark(); },
          [this] {
            MutexLock lock(mu);
            role.Depose();
            LOG(WARNING) << ShardName(shard) << ": deposed as the primary; serving no more";
          })) {}

// The replicator's thread reads the rest: it goes first.
Replica::~Replica() { replicator.reset(); }

Status ReplicaShards::Initialize(int shard, const ShardConfig& config,
                                 std::vector<std::pair<std::string, Tensor>> values,
                                 const std::vector<EmbeddingTableConfig>& tables,
                                 uint64_t cluster_id) {
  auto fresh = std::make_shared<Replica>(shard, self_, shippers_ ? shippers_(cluster_id) : nullptr);
  PST_RETURN_IF_ERROR(fresh->container.store.Initialize(config, std::move(values), tables));
  fresh->container.cluster_id = cluster_id;
  std::shared_ptr<Replica> replaced;
  {
    MutexLock lock(mu_);
    replaced = std::move(replicas_[shard]);
    replicas_[shard] = std::move(fresh);
  }
  if (replaced) replaced->replicator->Close(Aborted(ShardName(shard) + " was initialized again"));
  return Status::OK();
}

StatusOr<std::shared_ptr<Replica>> ReplicaShards::Find(int shard) const {
  MutexLock lock(mu_);
  auto it = replicas_.find(shard);
  if (it == replicas_.end()) {
    return FailedPrecondition("ps:" + std::to_string(self_) + " holds no replica of " +
                              ShardName(shard) + " (variables are not initialized yet)");
  }
  return it->second;
}

StatusOr<std::shared_ptr<Replica>> ReplicaShards::FindPrimary(int shard, int64_t epoch) const {
  PST_ASSIGN_OR_RETURN(std::shared_ptr<Replica> replica, Find(shard));
  MutexLock lock(replica->mu);
  PST_RETURN_IF_ERROR(replica->role.CheckClientRequest(epoch));
  return replica;
}

Status ReplicaShards::Adopt(const ShardChain& chain) {
  PST_ASSIGN_OR_RETURN(std::shared_ptr<Replica> replica, Find(chain.shard));
  if (!replica->shipper && chain.primary == self_ && !chain.backups.empty()) {
    return FailedPrecondition("this ps cannot ship to backups (no transport)");
  }
  MutexLock lock(replica->mu);
  const bool was_primary = replica->role.primary();
  PST_RETURN_IF_ERROR(replica->role.Adopt(chain));
  if (replica->role.primary()) {
    replica->replicator->SetChain(chain.epoch, chain.backups);
  } else {
    replica->replicator->Close(FailedPrecondition("ps:" + std::to_string(self_) +
                                                  " is a backup of " + chain.Describe() + " now"));
  }
  if (was_primary != replica->role.primary() || chain.epoch == 1) {
    LOG(INFO) << (replica->role.primary() ? "primary" : "backup") << " of " << chain.Describe();
  }
  return Status::OK();
}

Status ReplicaShards::TakeShipment(int sender, int shard, int64_t epoch,
                                   const NamedTensors& state) {
  PST_ASSIGN_OR_RETURN(std::shared_ptr<Replica> replica, Find(shard));
  // Held across the restore: a chain adopted meanwhile would otherwise let
  // an older primary's state overwrite a newer one's.
  MutexLock lock(replica->mu);
  PST_RETURN_IF_ERROR(replica->role.CheckShipment(sender, epoch));
  PST_RETURN_IF_ERROR(replica->container.store.Restore(state));
  ++replica->shipments_taken;
  if (replica->filled_at_epoch != epoch) {
    LOG(INFO) << ShardName(shard) << ": holds the state of primary ps:" << sender << " at epoch "
              << epoch;
  }
  replica->filled_at_epoch = epoch;
  return Status::OK();
}

void ReplicaShards::StopAll() {
  std::map<int, std::shared_ptr<Replica>> stopping;
  {
    MutexLock lock(mu_);
    stopping.swap(replicas_);
  }
  stopping.clear();  // a request still holding one stops it when it ends
}

bool ReplicaShards::empty() const {
  MutexLock lock(mu_);
  return replicas_.empty();
}

std::vector<ReplicaLoad> ReplicaShards::Loads() const {
  std::vector<std::shared_ptr<Replica>> replicas;
  {
    MutexLock lock(mu_);
    for (const auto& [shard, r] : replicas_) replicas.push_back(r);
  }
  std::vector<ReplicaLoad> loads;
  for (const auto& r : replicas) {
    ReplicaLoad load;
    load.shard = r->shard;
    load.rounds = r->replicator->rounds();
    load.bytes_shipped = r->replicator->bytes_shipped();
    MutexLock lock(r->mu);
    load.epoch = r->role.epoch();
    load.primary = r->role.primary();
    load.deposed = r->role.deposed();
    load.shipments_taken = r->shipments_taken;
    load.filled_at_epoch = r->filled_at_epoch;
    load.backups = r->role.chain().backups;
    loads.push_back(load);
  }
  return loads;
}

}  // namespace pst
