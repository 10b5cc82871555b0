#include "chief/replication/routes_board.h"

#include <utility>

namespace pst {

void RoutesBoard::Publish(std::vector<ShardChain> chains) {
  MutexLock lock(mu_);
  chains_ = std::move(chains);
}

StatusOr<std::vector<ShardChain>> RoutesBoard::FetchRoutes() {
  MutexLock lock(mu_);
  if (chains_.empty()) return FailedPrecondition("the shards' chains are not set yet");
  return chains_;
}

}  // namespace pst
