#include "ps/replication/replica_role.h"

#include <algorithm>

namespace pst {
namespace {

std::string Ps(int task) { return "ps:" + std::to_string(task); }

}  // namespace

std::string ShardChain::Describe() const {
  std::string backup_list;
  for (int b : backups) backup_list += (backup_list.empty() ? "" : ", ") + Ps(b);
  return "shard " + std::to_string(shard) + " epoch " + std::to_string(epoch) + ": primary " +
         Ps(primary) + ", backups " + (backup_list.empty() ? "none" : backup_list);
}

std::vector<int> ShardChain::Tasks() const {
  std::vector<int> tasks = {primary};
  tasks.insert(tasks.end(), backups.begin(), backups.end());
  return tasks;
}

bool ShardChain::Names(int task) const {
  return primary == task || std::find(backups.begin(), backups.end(), task) != backups.end();
}

Status ReplicaRole::Adopt(const ShardChain& chain) {
  if (configured_ && chain.epoch < chain_.epoch) {
    return FailedPrecondition("a chain of epoch " + std::to_string(chain.epoch) +
                              " is older than the one held (" + chain_.Describe() + ")");
  }
  if (!chain.Names(self_)) {
    return FailedPrecondition("the chain " + chain.Describe() + " does not name " + Ps(self_));
  }
  chain_ = chain;
  configured_ = true;
  deposed_ = false;
  return Status::OK();
}

Status ReplicaRole::CheckClientRequest(int64_t epoch) const {
  const std::string what = "shard " + std::to_string(chain_.shard);
  if (!configured_) return FailedPrecondition(Ps(self_) + " has no chain for " + what + " yet");
  if (deposed_) {
    return FailedPrecondition(Ps(self_) + " was deposed as the primary of " + what + " (epoch " +
                              std::to_string(chain_.epoch) + " or later holds)");
  }
  if (epoch != chain_.epoch || chain_.primary != self_) {
    return FailedPrecondition("routed by epoch " + std::to_string(epoch) + ", but " +
                              chain_.Describe() + " (as " + Ps(self_) + " knows it)");
  }
  return Status::OK();
}

Status ReplicaRole::CheckShipment(int sender, int64_t epoch) const {
  const std::string what = "shard " + std::to_string(chain_.shard);
  if (!configured_) return Unavailable(Ps(self_) + " has no chain for " + what + " yet");
  if (epoch < chain_.epoch && chain_.primary == sender) {
    // Still the primary: a round that began before the sender adopted the
    // chain this task holds.
    return Unavailable(Ps(sender) + " shipped " + what + " at epoch " + std::to_string(epoch) +
                       "; ship again at epoch " + std::to_string(chain_.epoch));
  }
  if (epoch < chain_.epoch) {
    return Aborted(Ps(sender) + " shipped " + what + " at epoch " + std::to_string(epoch) +
                   ", deposed: " + chain_.Describe());
  }
  if (epoch > chain_.epoch) {
    return Unavailable(Ps(self_) + " holds " + what + " at epoch " + std::to_string(chain_.epoch) +
                       ", older than the shipment's " + std::to_string(epoch));
  }
  if (chain_.primary == self_ || sender != chain_.primary) {
    return FailedPrecondition(Ps(sender) + " is not the primary of " + chain_.Describe());
  }
  return Status::OK();
}

}  // namespace pst
