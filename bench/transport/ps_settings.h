// What the framework rounds and the training section set up alike: the
// cluster id, the client's identity (worker 0) and the ps optimizer (SGD).
#ifndef PST_BENCH_TRANSPORT_PS_SETTINGS_H_
#define PST_BENCH_TRANSPORT_PS_SETTINGS_H_

#include <cstdint>

#include "ps/ps_client.h"

namespace pst {

constexpr uint64_t kBenchClusterId = 1;

inline ClientIdentity BenchIdentity() {
  ClientIdentity identity;
  identity.role = wire::Role::Worker;
  identity.index = 0;
  identity.cluster_id = kBenchClusterId;
  return identity;
}

inline ShardConfig SgdConfig() {
  ShardConfig config;
  config.optimizer.name = "sgd";
  config.optimizer.learning_rate = 0.01f;
  return config;
}

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_PS_SETTINGS_H_
