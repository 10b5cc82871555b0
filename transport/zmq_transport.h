// ZmqTransport: the real transport, ZeroMQ over TCP (Channel, RpcServer),
// with tensor payloads through shared memory between tasks on one host,
// and then their headers through bells, unless `shm` says off
// (docs/SHARED_MEMORY.md).
//
// Thread safety: Connect and Listen are thread-safe (the context is).
#ifndef PST_TRANSPORT_ZMQ_TRANSPORT_H_
#define PST_TRANSPORT_ZMQ_TRANSPORT_H_

#include <zmq.hpp>

#include "transport/shm_options.h"
#include "transport/transport.h"

namespace pst {

class ZmqTransport : public Transport {
 public:
  // `context` is borrowed and must outlive the transport and all it made.
  explicit ZmqTransport(zmq::context_t& context, ShmOptions shm = DefaultShmOptions())
      : context_(context), shm_(shm) {}

  std::unique_ptr<Connection> Connect(ChannelOptions options) override;
  std::unique_ptr<Server> Listen(ServerOptions options, Server::Handler handler) override;

 private:
  zmq::context_t& context_;
  const ShmOptions shm_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_ZMQ_TRANSPORT_H_
