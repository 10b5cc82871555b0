#include "chief/replication/running_chains.h"

#include <algorithm>

namespace pst {
namespace {

// The replica of `shard` that task `task` reports; null when none.
const ReplicaLoad* ReplicaOf(const std::vector<ReplicaLoad>& replicas, int shard) {
  for (const ReplicaLoad& r : replicas) {
    if (r.shard == shard) return &r;
  }
  return nullptr;
}

RunningChains NotRunning(std::string why) { return RunningChains{{}, {}, std::move(why)}; }

}  // namespace

// The tasks of `backups` that hold shard `shard` at `epoch`, not deposed
// (and, with `filled`, hold their primary's state of that epoch).
std::vector<int> Holding(const std::vector<std::vector<ReplicaLoad>>& by_task, int shard,
                         int64_t epoch, const std::vector<int>& backups, bool filled) {
  std::vector<int> holding;
  for (int b : backups) {
    const int tasks = static_cast<int>(by_task.size());
    const ReplicaLoad* r = b >= 0 && b < tasks ? ReplicaOf(by_task[b], shard) : nullptr;
    if (r != nullptr && !r->deposed && r->epoch == epoch &&
        (!filled || r->filled_at_epoch == epoch)) {
      holding.push_back(b);
    }
  }
  return holding;
}

RunningChains FindRunningChains(const std::vector<std::vector<ReplicaLoad>>& by_task,
                                int num_shards) {
  const int num_tasks = static_cast<int>(by_task.size());
  bool any = false;
  for (const std::vector<ReplicaLoad>& replicas : by_task) any = any || !replicas.empty();
  if (!any) return NotRunning("");  // a first start: nothing to find
  RunningChains found;
  for (int shard = 0; shard < num_shards; ++shard) {
    // The live primary at the highest epoch, else the replica at the highest
    // epoch that holds the chain (a backup whose primary was lost).
    int primary = -1;
    const ReplicaLoad* held = nullptr;
    for (int t = 0; t < num_tasks; ++t) {
      const ReplicaLoad* r = ReplicaOf(by_task[t], shard);
      if (r == nullptr || r->deposed) continue;
      const bool better = held == nullptr || (r->primary && !held->primary) ||
                          (r->primary == held->primary && r->epoch > held->epoch);
      if (better) {
        primary = r->primary ? t : -1;
        held = r;
      }
    }
    if (held == nullptr) return NotRunning("shard " + std::to_string(shard) + " has no replica");
    ShardChain chain{shard, held->epoch, primary, {}};
    std::vector<int> backups = held->backups;
    if (primary < 0) {  // as the chief would have: its first filled backup takes over
      const std::vector<int> filled = Holding(by_task, shard, held->epoch, backups, true);
      if (filled.empty()) {
        return NotRunning("shard " + std::to_string(shard) +
                          " lost its primary and has no filled backup");
      }
      chain.primary = filled.front();
      backups.erase(std::find(backups.begin(), backups.end(), chain.primary));
    }
    chain.backups = Holding(by_task, shard, held->epoch, backups, false);
    if (primary < 0 || chain.backups.size() != backups.size()) {
      ++chain.epoch;  // a new chain: fences what it left out
      found.changed.push_back(chain);
    }
    found.chains.push_back(chain);
  }
  return found;
}

}  // namespace pst
