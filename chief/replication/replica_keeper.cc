#include "chief/replication/replica_keeper.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/clock.h"

namespace pst {
namespace {

MonotonicClock::TimePoint In(std::chrono::milliseconds patience) {
  return SteadyClock().Now() + patience;
}

}  // namespace

ReplicaKeeper::ReplicaKeeper(int num_ps, int replicas, ShardAdmin* ps, RoutesBoard* board,
                             InitializeTask initialize_task)
    : chains_(num_ps, replicas),
      ps_(ps),
      board_(board),
      initialize_task_(std::move(initialize_task)),
      lost_(num_ps, false) {
  board_->Publish(chains_.chains());
}

Status ReplicaKeeper::SendAll(std::chrono::milliseconds patience) {
  board_->Publish(chains_.chains());
  PST_RETURN_IF_ERROR(ps_->SendChains(chains_.chains(), In(patience)));
  LOG(INFO) << "replicated shards (--ps_replicas=" << chains_.replicas() << "):\n"
            << chains_.Describe();
  return Status::OK();
}

void ReplicaKeeper::ResetAll() {
  chains_.ResetAll();
  std::fill(lost_.begin(), lost_.end(), false);
  lost_whole_.clear();
  board_->Publish(chains_.chains());
}

void ReplicaKeeper::Adopt(const RunningChains& running, std::chrono::milliseconds patience) {
  chains_.Adopt(running.chains);
  lost_whole_.clear();
  const int num_ps = static_cast<int>(lost_.size());
  for (int t = 0; t < num_ps; ++t) {
    lost_[t] = false;
    for (const ShardChain& c : running.chains) {
      const std::vector<int> home = HomeReplicas(c.shard, num_ps, chains_.replicas());
      const bool home_replica = std::find(home.begin(), home.end(), t) != home.end();
      if (home_replica && !c.Names(t)) lost_[t] = true;
    }
  }
  LOG(INFO) << "replicated shards (--ps_replicas=" << chains_.replicas()
            << "), as the running ps hold them:\n"
            << chains_.Describe();
  Apply(ChainChange{running.changed, {}}, "a chain changed as this chief takes over", patience);
}

int ReplicaKeeper::lost_tasks() const {
  return static_cast<int>(std::count(lost_.begin(), lost_.end(), true));
}

bool ReplicaKeeper::HoldsItsReplicas(int task, const ShardStatus& status) const {
  for (const ShardChain& chain : chains_.chains()) {
    if (!chain.Names(task)) continue;
    const bool held = std::any_of(
        status.replicas.begin(), status.replicas.end(),
        [&](const ReplicaLoad& r) { return r.shard == chain.shard && r.epoch > 0 && !r.deposed; });
    if (!held) return false;
  }
  return true;
}

void ReplicaKeeper::Apply(const ChainChange& change, const std::string& why,
                          std::chrono::milliseconds patience) {
  board_->Publish(chains_.chains());
  for (const ShardChain& c : change.changed) LOG(WARNING) << why << ": " << c.Describe();
  if (change.changed.empty()) return;
  if (Status sent = ps_->SendChains(change.changed, In(patience)); !sent.ok()) {
    LOG(WARNING) << "sending the changed chains: " << sent.ToString();
  }
}

StatusOr<std::vector<int>> ReplicaKeeper::Repair(std::chrono::milliseconds patience) {
  for (int t = 0; t < static_cast<int>(lost_.size()); ++t) {
    const std::string task = "ps:" + std::to_string(t);
    StatusOr<ShardStatus> status = ps_->GetShardStatus(t, In(lost_[t] ? patience / 10 : patience));
    if (!status.ok()) {
      if (lost_[t]) continue;
      lost_[t] = true;
      const ChainChange change = chains_.TaskLost(t);
      Apply(change, task + " lost (" + status.status().message() + ")", patience);
      lost_whole_.insert(lost_whole_.end(), change.lost_shards.begin(), change.lost_shards.end());
      continue;
    }
    const bool empty = !HoldsItsReplicas(t, *status);
    if (!lost_[t] && !empty) {
      for (const ReplicaLoad& r : status->replicas) chains_.Filled(r.shard, t, r.filled_at_epoch);
      continue;
    }
    if (!lost_[t]) {
      // Restarted before its loss was seen: lost all the same.
      const ChainChange change = chains_.TaskLost(t);
      Apply(change, task + " restarted without its replicas", patience);
      lost_whole_.insert(lost_whole_.end(), change.lost_shards.begin(), change.lost_shards.end());
    }
    lost_[t] = false;
    const ChainChange back = chains_.TaskBack(t);
    board_->Publish(chains_.chains());
    if (Status initialized = initialize_task_(t); !initialized.ok()) {
      // Gone again, or not ready: out of the chains until the next look.
      LOG(WARNING) << task
                   << " answers but its replicas cannot be initialized: " << initialized.ToString();
      lost_[t] = true;
      chains_.TaskLost(t);
      board_->Publish(chains_.chains());
      continue;
    }
    Apply(back, task + " is back: a backup again, filled by its primary", patience);
  }
  std::sort(lost_whole_.begin(), lost_whole_.end());
  lost_whole_.erase(std::unique(lost_whole_.begin(), lost_whole_.end()), lost_whole_.end());
  return lost_whole_;
}

}  // namespace pst
