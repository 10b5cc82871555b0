// Test helper: P ps shards (PsService) served over an InProcessTransport,
// and PsClients or raw connections to them. No sockets, no processes.
#ifndef PST_PS_TESTING_IN_PROCESS_SHARDS_H_
#define PST_PS_TESTING_IN_PROCESS_SHARDS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ps/ps_client.h"
#include "ps/ps_service.h"
#include "ps/transport_shipper.h"
#include "transport/in_process.h"

namespace pst {

class InProcessShards {
 public:
  // `notifier` (borrowed, may be null) hears of completed sync steps;
  // `container_chief` links named containers to their chiefs; shard k writes
  // its checkpoint parts under part_dirs[k] (none given: it refuses to save).
  // `replicated`: shards ship their replicas' state to each other
  // (--ps_replicas), with `ship_timeout_ms` per shipment.
  explicit InProcessShards(int num_shards, ShardAppliedNotifier* notifier = nullptr,
                           ContainerChiefFactory container_chief = nullptr,
                           const std::vector<std::string>& part_dirs = {}, bool replicated = false,
                           int ship_timeout_ms = 2000) {
    services_.resize(num_shards);
    for (int k = 0; k < num_shards; ++k) cluster_.ps.push_back({"127.0.0.1", 2000 + k});
    for (int k = 0; k < num_shards; ++k) {
      ServerOptions options;
      options.name = "ps:" + std::to_string(k);
      options.endpoint = cluster_.ps[k].Endpoint();
      options.role = wire::Role::Ps;
      options.index = k;
      servers_.push_back(
          transport_.Listen(options, [this, k](const ReceivedMessage& r, RequestContext& c) {
            return services_[k]->Handle(r, c.peer_address(), &c);
          }));
      PsServiceOptions service_options{k, part_dirs.empty() ? "" : part_dirs[k], std::nullopt,
                                       container_chief, num_shards};
      if (replicated) service_options.shippers = Shippers(k, ship_timeout_ms);
      services_[k] = std::make_unique<PsService>(servers_[k].get(), notifier, service_options);
      EXPECT_TRUE(servers_[k]->Start().ok());
    }
  }

  // `container`: the named container every request names ("": the default).
  std::unique_ptr<PsClient> Client(const Placement& placement, uint64_t cluster_id,
                                   wire::Role role = wire::Role::Worker, int index = 0,
                                   const std::string& container = "",
                                   DType wire_dtype = DType::kFloat32) {
    ClientIdentity identity;
    identity.wire_dtype = wire_dtype;
    identity.container = container;
    identity.role = role;
    identity.index = index;
    identity.cluster_id = cluster_id;
    identity.rpc_timeout_ms = 2000;
    return std::make_unique<PsClient>(transport_, cluster_, placement, identity);
  }
  std::unique_ptr<Connection> Connect(int shard, uint64_t cluster_id,
                                      const std::string& container = "") {
    ChannelOptions options;
    options.container = container;
    options.peer_name = "ps:" + std::to_string(shard);
    options.endpoint = cluster_.ps[shard].Endpoint();
    options.cluster_id = cluster_id;
    options.role = wire::Role::Worker;
    options.rpc_timeout_ms = 2000;
    return transport_.Connect(options);
  }
  // The replicators stop before the servers they answer through.
  ~InProcessShards() {
    for (auto& service : services_) service->StopReplicas();
  }

  PsService& service(int shard) { return *services_[shard]; }
  Server& server(int shard) { return *servers_[shard]; }
  Transport& transport() { return transport_; }

 private:
  // Ships from ps `self` to the others, as RunPsOn makes them.
  ReplicaShards::ShipperFactory Shippers(int self, int timeout_ms) {
    std::vector<ChannelOptions> ps;
    for (size_t j = 0; j < cluster_.ps.size(); ++j) {
      ChannelOptions options;
      options.peer_name = "ps:" + std::to_string(j);
      options.endpoint = cluster_.ps[j].Endpoint();
      options.role = wire::Role::Ps;
      options.index = self;
      options.rpc_timeout_ms = timeout_ms;
      ps.push_back(options);
    }
    return [this, ps](uint64_t cluster_id) {
      std::vector<ChannelOptions> to = ps;
      for (ChannelOptions& o : to) o.cluster_id = cluster_id;
      return std::make_unique<TransportShipper>(&transport_, std::move(to));
    };
  }

  InProcessTransport transport_;
  ClusterSpec cluster_;
  std::vector<std::unique_ptr<PsService>> services_;
  std::vector<std::unique_ptr<Server>> servers_;  // after services_: stopped first
};

}  // namespace pst

#endif  // PST_PS_TESTING_IN_PROCESS_SHARDS_H_
