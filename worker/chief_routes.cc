#include "worker/chief_routes.h"

#include <utility>

#include "common/clock.h"
#include "ps/chain_wire.h"

namespace pst {

ChiefRoutes::ChiefRoutes(Transport& transport, ChannelOptions chief, int num_ps)
    : channel_(transport.Connect(std::move(chief))), num_ps_(num_ps) {}

StatusOr<std::vector<ShardChain>> ChiefRoutes::FetchRoutes() {
  OutgoingMessage request;
  request.type = wire::MessageType::RoutesRequest;
  PST_ASSIGN_OR_RETURN(uint64_t id, channel_->Send(request));
  PST_ASSIGN_OR_RETURN(ReceivedMessage reply,
                       channel_->Receive(id, SteadyClock().Now() + kPatience));
  PST_ASSIGN_OR_RETURN(std::vector<ShardChain> chains, ChainsFromWire(reply.header(), num_ps_));
  if (static_cast<int>(chains.size()) != num_ps_) {
    return Internal("the chief's routes name " + std::to_string(chains.size()) + " shards, not " +
                    std::to_string(num_ps_));
  }
  return chains;
}

}  // namespace pst
