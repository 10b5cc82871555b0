// ChiefRoutes: a worker's source of the shards' chains under --ps_replicas:
// it asks the chief (RoutesRequest) on its own connection, so the answer
// never mixes with ChiefLink's fire-and-forget reports.
//
// Thread safety: none; used by the training thread's PsClient.
#ifndef PST_WORKER_CHIEF_ROUTES_H_
#define PST_WORKER_CHIEF_ROUTES_H_

#include <chrono>
#include <memory>
#include <vector>

#include "ps/replica_router.h"
#include "transport/transport.h"

namespace pst {

class ChiefRoutes : public RouteSource {
 public:
  // How long one question waits for the chief.
  static constexpr std::chrono::milliseconds kPatience{1000};

  // `transport` is borrowed; `num_ps` bounds the chains' task indices.
  ChiefRoutes(Transport& transport, ChannelOptions chief, int num_ps);
  void set_cluster_id(uint64_t id) { channel_->set_cluster_id(id); }

  StatusOr<std::vector<ShardChain>> FetchRoutes() override;

 private:
  std::unique_ptr<Connection> channel_;
  const int num_ps_;
};

}  // namespace pst

#endif  // PST_WORKER_CHIEF_ROUTES_H_
