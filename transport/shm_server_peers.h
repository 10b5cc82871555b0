// The shared-memory side of an RpcServer (docs/SHARED_MEMORY.md): the rings
// of the clients on this host that offered theirs, keyed by the name of the
// client's request ring, and which ZeroMQ connection (routing id) reaches
// each, so that a reply's payload goes into the ring of the client it
// answers. Where the client made bells beside its rings (shm_bell.h), the
// server reads requests' short frames from the request bell and answers
// through the reply bell (docs/SHARED_MEMORY.md, "Headers through bells").
//
// Thread safety: none; used by the server's I/O thread only. Messages
// decoded from a ring may be dropped on any thread.
#ifndef PST_TRANSPORT_SHM_SERVER_PEERS_H_
#define PST_TRANSPORT_SHM_SERVER_PEERS_H_

#include <poll.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "transport/message.h"
#include "transport/shm/shm_bell.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"
#include "transport/shm_options.h"
#include "transport/shm_payload.h"
#include "transport/shm_ref.h"

namespace pst {

class ShmServerPeers {
 public:
  // `server_name` is for the logs.
  ShmServerPeers(ShmOptions options, std::string server_name);

  // A request's frames (routing id removed). When they start with a ref it
  // is taken off: an offer is taken up (or declined, logged once) and
  // nullopt returned, the rest to be decoded as usual; a payload ref gives
  // the message, decoded with its payload in place, or an error. nullopt
  // for frames without a ref. `cluster_id` is the server's (0: not known
  // yet; then the one the request's header claims): a ring of another
  // cluster is refused. `peer_address` is the connection's (the kernel's),
  // kept for the requests that come through the client's bell.
  StatusOr<std::optional<ReceivedMessage>> Incoming(const std::string& routing_id,
                                                    const std::string& peer_address,
                                                    std::vector<zmq::message_t>* frames,
                                                    uint64_t cluster_id, size_t max_message_bytes);
  // An encoded reply (header, tensor frames) to `routing_id`: moved into
  // that client's reply ring when it has one and the payload fits, then
  // *frames is [ref, header]. Returns the payload bytes moved (0: none).
  size_t Outgoing(const std::string& routing_id, std::vector<zmq::message_t>* frames);
  // After Outgoing: sends the frames through the reply bell of the client
  // `routing_id` reaches. false: they go over ZeroMQ (no bell, too long,
  // or the pipe is full).
  bool SendOverBell(const std::string& routing_id, const std::vector<zmq::message_t>& frames);

  // A request that came through a client's bell, with what ZeroMQ would
  // have told of it: the connection that reaches the client, and its address.
  struct BellRequest {
    std::string routing_id;
    std::string peer_address;
    std::vector<zmq::message_t> frames;  // as from ZeroMQ, routing id removed
  };
  // One pollfd (POLLIN) per request bell, appended.
  void AddBellFds(std::vector<pollfd>* fds) const;
  // The requests waiting in the bells whose pollfds (as AddBellFds made
  // them, after a poll) fired, in each bell's order. A bell that holds no
  // records is logged and closed: that client's headers go over TCP.
  std::vector<BellRequest> TakeBellRequests(const std::vector<pollfd>& fds);

  // Forgets the clients that are gone (their request ring's writer detached
  // or died) and the connections that led to them.
  void DropGone();

  size_t num_peers() const { return peers_.size(); }

 private:
  struct Peer {
    std::shared_ptr<ShmInbox> requests;
    std::unique_ptr<ShmSegment> reply_segment;
    std::unique_ptr<ShmRingWriter> replies;
    uint64_t next_reply_sequence = 0;
    // Both or neither: the client's bells, opened before the request ring
    // is attached, so that a client that sees the server attached may ring.
    std::unique_ptr<ShmBell> request_bell;
    std::unique_ptr<ShmBell> reply_bell;
    std::string routing_id;  // the connection last seen to reach the client
    std::string peer_address;
  };
  // Maps the client's two segments and attaches: the reply ring's writer
  // first, the request ring's reader last, since that is what the client
  // takes for "the server took the offer".
  StatusOr<std::shared_ptr<Peer>> Attach(const ShmRef& ref, uint64_t cluster_id);
  // `peer` is reached through `routing_id` from now on.
  void Route(const std::string& routing_id, const std::string& peer_address,
             const std::shared_ptr<Peer>& peer);

  const ShmOptions options_;
  const std::string server_name_;
  bool declined_logged_ = false;
  std::map<std::string, std::shared_ptr<Peer>> peers_;   // by request ring name
  std::map<std::string, std::shared_ptr<Peer>> routes_;  // by routing id
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SERVER_PEERS_H_
