// TransportShipper: a primary's shipments to its backups (ShipRequest) over
// the cluster's transport, one connection per backup ps, made at its first
// shipment.
//
// Thread safety: none; one per Replicator, used by its thread.
#ifndef PST_PS_TRANSPORT_SHIPPER_H_
#define PST_PS_TRANSPORT_SHIPPER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "ps/replication/replicator.h"
#include "transport/transport.h"

namespace pst {

class TransportShipper : public BackupShipper {
 public:
  // `ps[k]`: how to reach ps task k (endpoint, keys, timeout; role and
  // index are this task's, the cluster id the replica's job's).
  TransportShipper(Transport* transport, std::vector<ChannelOptions> ps);

  Status Send(int backup, int shard, int64_t epoch, const ShardState& state) override;
  Status Await(int backup) override;

 private:
  // A backup's connection and the shipment it still owes an answer to.
  struct Link {
    std::unique_ptr<Connection> connection;
    uint64_t request_id = 0;  // 0: none
    MonotonicClock::TimePoint deadline;
  };
  Transport* const transport_;
  const std::vector<ChannelOptions> ps_;
  std::map<int, Link> links_;  // by ps task
};

// The ShipRequest that carries `state` of `shard` at `epoch`.
OutgoingMessage ShipRequestOf(int shard, int64_t epoch, const ShardState& state);

}  // namespace pst

#endif  // PST_PS_TRANSPORT_SHIPPER_H_
