// ClusterCounts: what the ps shards counted, over the whole cluster, from
// each shard's status. Every push reaches every shard holding trainable
// variables, so each of them counts the same pushes: per-push counts take
// the largest shard's, where a sum would count each push once per shard.
//
// Plain values in and out.
#ifndef PST_CHIEF_CLUSTER_COUNTS_H_
#define PST_CHIEF_CLUSTER_COUNTS_H_

#include <cstdint>
#include <vector>

#include "ps/ps_client.h"

namespace pst {

struct ClusterCounts {
  uint64_t staleness_sum = 0, staleness_count = 0;
  int64_t staleness_max = 0;
  uint64_t dropped = 0, scaled = 0;
  uint64_t stale_dropped = 0;        // sync: stale pushes; async: dropped by policy
  std::vector<uint64_t> aggregated;  // sync: per worker, pushes applied
  std::vector<ShardStatus> shards;   // each shard's own load

  // Mean staleness of the gradients applied; 0 before any.
  double staleness_mean() const;
};

// `sync`: the run is synchronous (stale_dropped then counts stale pushes).
ClusterCounts CountsOf(std::vector<ShardStatus> shards, int num_workers, bool sync);

}  // namespace pst

#endif  // PST_CHIEF_CLUSTER_COUNTS_H_
