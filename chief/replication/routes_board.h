// RoutesBoard: the shards' chains as the chief last set them, for whoever
// routes by them: the chief's service answering a worker's RoutesRequest,
// and the chief's own PsClient.
//
// Thread safety: every method may be called concurrently.
#ifndef PST_CHIEF_REPLICATION_ROUTES_BOARD_H_
#define PST_CHIEF_REPLICATION_ROUTES_BOARD_H_

#include <vector>

#include "common/mutex.h"
#include "ps/replica_router.h"

namespace pst {

class RoutesBoard : public RouteSource {
 public:
  void Publish(std::vector<ShardChain> chains);
  // The chains published last; FailedPrecondition before the first.
  StatusOr<std::vector<ShardChain>> FetchRoutes() override;

 private:
  mutable Mutex mu_;
  std::vector<ShardChain> chains_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_CHIEF_REPLICATION_ROUTES_BOARD_H_
