// ZmqTransport: the real transport, ZeroMQ over TCP (Channel, RpcServer).
//
// Thread safety: Connect and Listen are thread-safe (the context is).
#ifndef PST_TRANSPORT_ZMQ_TRANSPORT_H_
#define PST_TRANSPORT_ZMQ_TRANSPORT_H_

#include <zmq.hpp>

#include "transport/transport.h"

namespace pst {

class ZmqTransport : public Transport {
 public:
  // `context` is borrowed and must outlive the transport and all it made.
  explicit ZmqTransport(zmq::context_t& context) : context_(context) {}

  std::unique_ptr<Connection> Connect(ChannelOptions options) override;
  std::unique_ptr<Server> Listen(ServerOptions options, Server::Handler handler) override;

 private:
  zmq::context_t& context_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_ZMQ_TRANSPORT_H_
