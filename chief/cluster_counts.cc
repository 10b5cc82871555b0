#include "chief/cluster_counts.h"

#include <algorithm>
#include <utility>

namespace pst {

double ClusterCounts::staleness_mean() const {
  return staleness_count ? double(staleness_sum) / staleness_count : 0;
}

ClusterCounts CountsOf(std::vector<ShardStatus> shards, int num_workers, bool sync) {
  ClusterCounts c;
  c.aggregated.assign(num_workers, 0);
  for (const ShardStatus& s : shards) {
    c.staleness_sum += s.store.staleness_sum;
    c.staleness_count += s.store.staleness_count;
    c.staleness_max = std::max(c.staleness_max, s.store.staleness_max);
    c.dropped += s.store.gradients_dropped;
    c.scaled += s.store.gradients_scaled;
    c.stale_dropped =
        std::max(c.stale_dropped, sync ? s.store.stale_pushes : s.store.gradients_dropped);
    const auto& per_worker = s.store.aggregated_per_worker;
    for (size_t w = 0; w < per_worker.size() && w < c.aggregated.size(); ++w) {
      c.aggregated[w] = std::max(c.aggregated[w], per_worker[w]);
    }
  }
  c.shards = std::move(shards);
  return c;
}

}  // namespace pst
