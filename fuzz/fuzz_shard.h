// The shard the fuzzers start from, and a fingerprint of a store's whole
// state for "a refused request changes nothing" checks. Shared by the
// fuzzers and make_corpus (whose seeds must fit this shard).
#ifndef PST_FUZZ_FUZZ_SHARD_H_
#define PST_FUZZ_FUZZ_SHARD_H_

#include <glog/logging.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ps/variable_store.h"

namespace pst {
namespace fuzz {

inline constexpr char kGlobalStep[] = "global_step";

// SGD at learning rate 0.5 unless `optimizer` says otherwise; sync mode
// aggregates `replicas` pushes per step.
inline ShardConfig ShardConfigFor(bool sync, const std::string& optimizer = "sgd",
                                  int replicas = 2) {
  ShardConfig config;
  config.optimizer.name = optimizer;
  config.optimizer.learning_rate = 0.5f;
  config.global_step_variable = kGlobalStep;
  if (sync) {
    config.mode = TrainingMode::kSync;
    config.replicas_to_aggregate = replicas;
  }
  return config;
}

// "global_step" (int64 scalar), "w" (float32 [4,4]), "b" (float32 [4]).
inline std::vector<std::pair<std::string, Tensor>> ShardValues() {
  Tensor w(DType::kFloat32, {4, 4}), b(DType::kFloat32, {4});
  for (int i = 0; i < 16; ++i) w.f32()[i] = 0.25f * i - 1.0f;
  for (int i = 0; i < 4; ++i) b.f32()[i] = 0.5f * i;
  return {{kGlobalStep, Tensor(DType::kInt64, {})}, {"w", w}, {"b", b}};
}

// Every variable (value, version, update count, optimizer slots), the sync
// step and the counters, one line each (values in hex): equal strings,
// equal states.
inline std::string Fingerprint(const VariableStore& store) {
  std::ostringstream o;
  auto snapshot = store.Snapshot();
  CHECK(snapshot.ok()) << snapshot.status().ToString();
  for (const auto& [name, t] : *snapshot) {
    o << name << ' ' << DTypeName(t.dtype()) << ShapeToString(t.shape()) << ' ';
    const auto* bytes = static_cast<const uint8_t*>(t.data());
    for (size_t i = 0; i < t.num_bytes(); ++i) {
      o << "0123456789abcdef"[bytes[i] >> 4] << "0123456789abcdef"[bytes[i] & 15];
    }
    o << '\n';
  }
  const StoreStats s = store.Stats();
  o << "initialized=" << s.initialized << " variables=" << s.variables << " bytes=" << s.bytes
    << " updates_applied=" << s.updates_applied << " dropped=" << s.gradients_dropped
    << " scaled=" << s.gradients_scaled << " staleness_sum=" << s.staleness_sum
    << " staleness_count=" << s.staleness_count << " staleness_max=" << s.staleness_max
    << " global_step=" << s.global_step << " sync_step=" << s.sync_step
    << " stale_pushes=" << s.stale_pushes << " duplicate_pushes=" << s.duplicate_pushes
    << " aggregated=[";
  for (uint64_t a : s.aggregated_per_worker) o << a << ',';
  o << "] lr_lowerings=" << s.lr_lowerings;
  return o.str();
}

}  // namespace fuzz
}  // namespace pst

#endif  // PST_FUZZ_FUZZ_SHARD_H_
