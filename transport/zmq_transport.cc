#include "transport/zmq_transport.h"

#include "transport/channel.h"
#include "transport/server.h"

namespace pst {

std::unique_ptr<Connection> ZmqTransport::Connect(ChannelOptions options) {
  return std::make_unique<Channel>(context_, std::move(options), shm_);
}

std::unique_ptr<Server> ZmqTransport::Listen(ServerOptions options, Server::Handler handler) {
  return std::make_unique<RpcServer>(context_, std::move(options), std::move(handler), shm_);
}

}  // namespace pst
