// Test helper: InProcessShards that write checkpoint parts, each shard into
// a folder of its own, initialized with a global step and one float
// variable "w" (3 values unless told); and the chief's PsClient to them. A shard whose
// folder cannot be created fails every save, as a full disk would, while it
// still serves. No sockets, no processes.
#ifndef PST_TESTS_IN_PROCESS_CHECKPOINTING_SHARDS_H_
#define PST_TESTS_IN_PROCESS_CHECKPOINTING_SHARDS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/placement.h"
#include "ps/ps_client.h"
#include "ps/shard_admin.h"
#include "ps/shard_config.h"
#include "ps/testing/in_process_shards.h"

namespace pst {

class CheckpointingShards {
 public:
  static constexpr uint64_t kCluster = 7;

  // Shard k writes its parts under part_dirs[k].
  explicit CheckpointingShards(const std::vector<std::string>& part_dirs, int64_t w_size = 3)
      : w_size_(w_size),
        shards_(static_cast<int>(part_dirs.size()), nullptr, nullptr, part_dirs),
        chief_(shards_.Client(PlacementOver(static_cast<int>(part_dirs.size()), w_size), kCluster,
                              wire::Role::Chief)) {}

  PsClient& chief() { return *chief_; }
  ShardAdmin& admin() { return admin_; }
  // Ps task k stops answering (as if lost).
  void Stop(int k) { shards_.server(k).Stop(); }

  // Every shard holds global step `step` and w = {w0, w0 + 1, w0 + 2, ...}.
  Status Initialize(int64_t step, float w0) {
    Tensor global_step(DType::kInt64, {});
    global_step.i64()[0] = step;
    Tensor w(DType::kFloat32, {w_size_});
    for (int i = 0; i < w_size_; ++i) w.f32()[i] = w0 + static_cast<float>(i);
    ShardConfig config;
    config.global_step_variable = kGlobalStepName;
    return admin_.Initialize(config, {global_step, w});
  }

  // {global step, w[0], w[1], ...} as the shards hold them now.
  std::vector<double> Values() {
    std::vector<Tensor> now;
    EXPECT_TRUE(chief_->Pull({0, 1}, &now).ok());
    if (now.size() != 2) return {};
    std::vector<double> values = {static_cast<double>(now[0].i64()[0])};
    for (int i = 0; i < w_size_; ++i) values.push_back(now[1].f32()[i]);
    return values;
  }

 private:
  // Round-robin: the global step on ps:0, "w" on ps:1 when there is one.
  static Placement PlacementOver(int num_shards, int64_t w_size) {
    PlacementOptions placement;
    placement.num_shards = num_shards;
    return Placement::Compute(WithGlobalStep({{"w", DType::kFloat32, {w_size}}}), placement)
        .value();
  }

  const int64_t w_size_;
  InProcessShards shards_;
  std::unique_ptr<PsClient> chief_;  // after shards_: gone before them
  ShardAdmin admin_{chief_.get()};
};

}  // namespace pst

#endif  // PST_TESTS_IN_PROCESS_CHECKPOINTING_SHARDS_H_
