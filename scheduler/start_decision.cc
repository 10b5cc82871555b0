#include "scheduler/start_decision.h"

namespace pst {
namespace {

std::string Ps(int shard) { return "ps:" + std::to_string(shard); }

StartDecision Restore(std::string why) { return StartDecision{false, 0, std::move(why)}; }

}  // namespace

StartDecision DecideStart(bool sync, const std::vector<ShardAtStart>& shards,
                          const std::vector<int>& sync_shards, int global_step_shard) {
  int holding = 0;
  std::string empty;  // the shards that hold nothing of the run
  for (int k = 0; k < static_cast<int>(shards.size()); ++k) {
    if (!shards[k].answered) return Restore(Ps(k) + " does not answer for this cluster");
    if (shards[k].holds_run) {
      ++holding;
    } else {
      empty += (empty.empty() ? "" : ", ") + Ps(k);
    }
  }
  if (holding == 0) return Restore("");
  if (!empty.empty()) return Restore(empty + " hold none of this cluster's variables");
  if (!sync || sync_shards.empty()) {
    return StartDecision{true, shards[global_step_shard].global_step, ""};
  }
  const int64_t step = shards[sync_shards.front()].sync_step;
  std::string steps;
  bool agree = true;
  for (int k : sync_shards) {
    agree = agree && shards[k].sync_step == step;
    steps += (steps.empty() ? "" : ", ") + Ps(k) + " at " + std::to_string(shards[k].sync_step);
  }
  if (!agree) return Restore("the shards applied different numbers of sync steps (" + steps + ")");
  return StartDecision{true, step, ""};
}

}  // namespace pst
