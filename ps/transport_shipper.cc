#include "ps/transport_shipper.h"

#include <utility>

namespace pst {

TransportShipper::TransportShipper(Transport* transport, std::vector<ChannelOptions> ps)
    : transport_(transport), ps_(std::move(ps)) {}

Status TransportShipper::Ship(int backup, int shard, int64_t epoch, const ShardState& state) {
  if (backup < 0 || backup >= static_cast<int>(ps_.size())) {
    return InvalidArgument("no ps:" + std::to_string(backup) + " in the cluster");
  }
  std::unique_ptr<Connection>& connection = connections_[backup];
  if (!connection) connection = transport_->Connect(ps_[backup]);
  return connection->Call(ShipRequestOf(shard, epoch, state)).status();
}

OutgoingMessage ShipRequestOf(int shard, int64_t epoch, const ShardState& state) {
  OutgoingMessage request;
  request.type = wire::MessageType::ShipRequest;
  for (const auto& [name, tensor] : state.tensors) request.tensors.push_back({name, 0, tensor});
  request.extras = [shard, epoch](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.replica = wire::CreateReplicaRoute(fbb, shard, epoch);
    return extras;
  };
  return request;
}

}  // namespace pst
