#include "ps/transport_shipper.h"

#include <utility>

namespace pst {

TransportShipper::TransportShipper(Transport* transport, std::vector<ChannelOptions> ps)
    : transport_(transport), ps_(std::move(ps)) {}

Status TransportShipper::Send(int backup, int shard, int64_t epoch, const ShardState& state) {
  if (backup < 0 || backup >= static_cast<int>(ps_.size())) {
    return InvalidArgument("no ps:" + std::to_string(backup) + " in the cluster");
  }
  Link& link = links_[backup];
  if (!link.connection) link.connection = transport_->Connect(ps_[backup]);
  link.request_id = 0;
  link.deadline = link.connection->DefaultDeadline();
  PST_ASSIGN_OR_RETURN(link.request_id, link.connection->Send(ShipRequestOf(shard, epoch, state)));
  return Status::OK();
}

Status TransportShipper::Await(int backup) {
  auto it = links_.find(backup);
  if (it == links_.end() || it->second.request_id == 0) {
    return FailedPrecondition("no shipment to ps:" + std::to_string(backup) + " awaits an answer");
  }
  Link& link = it->second;
  const uint64_t id = std::exchange(link.request_id, 0);
  return link.connection->Receive(id, link.deadline).status();
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
