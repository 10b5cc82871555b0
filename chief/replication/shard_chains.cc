#include "chief/replication/shard_chains.h"

#include <algorithm>

namespace pst {

std::vector<int> HomeReplicas(int shard, int num_ps, int replicas) {
  std::vector<int> tasks;
  for (int i = 0; i < replicas; ++i) tasks.push_back((shard + i) % num_ps);
  return tasks;
}

ShardChains::ShardChains(int num_ps, int replicas)
    : num_ps_(num_ps), replicas_(replicas), lost_(num_ps, false), filling_(num_ps) {
  for (int k = 0; k < num_ps; ++k) {
    const std::vector<int> home = HomeReplicas(k, num_ps, replicas);
    chains_.push_back(ShardChain{k, 1, home[0], std::vector<int>(home.begin() + 1, home.end())});
  }
}

bool ShardChains::Lost(int shard) const { return lost_[shard]; }

ChainChange ShardChains::TaskLost(int task) {
  ChainChange change;
  for (ShardChain& c : chains_) {
    if (Lost(c.shard)) continue;
    std::map<int, int64_t>& filling = filling_[c.shard];
    auto backup = std::find(c.backups.begin(), c.backups.end(), task);
    if (backup != c.backups.end()) {
      c.backups.erase(backup);
      filling.erase(task);
    } else if (c.primary == task) {
      auto filled = std::find_if(c.backups.begin(), c.backups.end(),
                                 [&](int b) { return filling.count(b) == 0; });
      if (filled == c.backups.end()) {
        lost_[c.shard] = true;
        change.lost_shards.push_back(c.shard);
        continue;
      }
      c.primary = *filled;
      c.backups.erase(filled);
      ++promotions_;
    } else {
      continue;
    }
    ++c.epoch;
    change.changed.push_back(c);
  }
  return change;
}

ChainChange ShardChains::TaskBack(int task) {
  ChainChange change;
  for (ShardChain& c : chains_) {
    if (Lost(c.shard)) continue;
    const std::vector<int> home = HomeReplicas(c.shard, num_ps_, replicas_);
    const bool home_replica = std::find(home.begin(), home.end(), task) != home.end();
    const bool in_chain = c.Names(task);
    if (!home_replica || in_chain) continue;
    c.backups.push_back(task);
    ++c.epoch;
    filling_[c.shard][task] = c.epoch;
    change.changed.push_back(c);
  }
  return change;
}

void ShardChains::Filled(int shard, int task, int64_t epoch) {
  if (shard < 0 || shard >= num_shards()) return;
  std::map<int, int64_t>& filling = filling_[shard];
  auto joined = filling.find(task);
  if (joined != filling.end() && epoch >= joined->second) filling.erase(joined);
}

ChainChange ShardChains::ResetAll() {
  int64_t newest = 0;
  for (const ShardChain& c : chains_) newest = std::max(newest, c.epoch);
  ChainChange change;
  for (ShardChain& c : chains_) {
    const std::vector<int> home = HomeReplicas(c.shard, num_ps_, replicas_);
    c = ShardChain{c.shard, newest + 1, home[0], std::vector<int>(home.begin() + 1, home.end())};
    lost_[c.shard] = false;
    filling_[c.shard].clear();
    change.changed.push_back(c);
  }
  return change;
}

void ShardChains::Adopt(const std::vector<ShardChain>& running) {
  chains_ = running;
  for (const ShardChain& c : chains_) {
    lost_[c.shard] = false;
    filling_[c.shard].clear();
    for (int b : c.backups) filling_[c.shard][b] = c.epoch;
  }
}

std::string ShardChains::Describe() const {
  std::string lines;
  for (const ShardChain& c : chains_) {
    lines += (lines.empty() ? "" : "\n") + c.Describe() + (Lost(c.shard) ? " (lost)" : "");
  }
  return lines;
}

}  // namespace pst
