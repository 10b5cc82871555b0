// InProcessTransport: connections and servers inside one process, without
// sockets, for unit tests of the services (STYLE.md: transport behind an
// interface with an in-process fake).
//
// Same semantics as the ZeroMQ transport where the services rely on them:
// messages are encoded and verified (DecodeMessage) as on the wire, request
// ids, deadlines (DeadlineExceeded naming the peer), error replies, deferred
// replies from any thread, the cluster-id check and the refusal of a message
// above max_message_bytes. A request to an endpoint where no server is
// started is lost, as a ZeroMQ one is until it times out.
//
// Differences: the handler runs on the sending thread, inside Send(), so a
// test is deterministic; queue_depth() is always 0.
//
// Thread safety: Connect, Listen and everything a Server does are
// thread-safe; each Connection is owned by one thread. Connections and
// servers must not outlive their transport.
#ifndef PST_TRANSPORT_IN_PROCESS_H_
#define PST_TRANSPORT_IN_PROCESS_H_

#include <memory>
#include <string>

#include "transport/transport.h"

namespace pst {

class InProcessTransport : public Transport {
 public:
  // `peer_address`: what handlers see as RequestContext::peer_address().
  explicit InProcessTransport(std::string peer_address = "127.0.0.1");
  ~InProcessTransport() override;

  std::unique_ptr<Connection> Connect(ChannelOptions options) override;
  std::unique_ptr<Server> Listen(ServerOptions options, Server::Handler handler) override;

  struct Network;  // shared by the connections and servers; in_process.cc

 private:
  std::shared_ptr<Network> network_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_IN_PROCESS_H_
