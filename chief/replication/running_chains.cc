#include "chief/replication/running_chains.h"

namespace pst {
namespace {

// The replica of `shard` that task `task` reports; null when none.
const ReplicaLoad* ReplicaOf(const std::vector<ReplicaLoad>& replicas, int shard) {
  for (const ReplicaLoad& r : replicas) {
    if (r.shard == shard) return &r;
  }
  return nullptr;
}

RunningChains NotRunning(std::string why) { return RunningChains{{}, std::move(why)}; }

}  // namespace

RunningChains FindRunningChains(const std::vector<std::vector<ReplicaLoad>>& by_task,
                                int num_shards) {
  const int num_tasks = static_cast<int>(by_task.size());
  bool any = false;
  for (const std::vector<ReplicaLoad>& replicas : by_task) any = any || !replicas.empty();
  if (!any) return NotRunning("");  // a first start: nothing to find
  RunningChains found;
  for (int shard = 0; shard < num_shards; ++shard) {
    const std::string name = "shard " + std::to_string(shard);
    int primary = -1;
    const ReplicaLoad* held = nullptr;
    for (int t = 0; t < num_tasks; ++t) {
      const ReplicaLoad* r = ReplicaOf(by_task[t], shard);
      if (r != nullptr && r->primary && !r->deposed &&
          (held == nullptr || r->epoch > held->epoch)) {
        primary = t;
        held = r;
      }
    }
    if (held == nullptr) return NotRunning(name + " has no primary on the running ps");
    for (int b : held->backups) {
      const ReplicaLoad* r = b >= 0 && b < num_tasks ? ReplicaOf(by_task[b], shard) : nullptr;
      if (r == nullptr || r->deposed || r->epoch != held->epoch) {
        return NotRunning(name + "'s backup ps:" + std::to_string(b) +
                          " does not hold its replica at epoch " + std::to_string(held->epoch));
      }
    }
    found.chains.push_back(ShardChain{shard, held->epoch, primary, held->backups});
  }
  return found;
}

}  // namespace pst
