// The shared-memory side of one Channel (docs/SHARED_MEMORY.md): the
// client's two rings to one server on the same host, requests out through
// one, replies in through the other, with ZeroMQ still carrying every
// header. Made when the channel first sends a tensor to a server on this
// host; the server attaches both rings when it takes the offer that rides
// on a request; from then on payloads go through the rings, and over TCP
// whenever one does not fit. Once the server has attached, it answers
// through the reply bell (shm_bell.h); after the first answer that came
// that way, the short frames of each request (the ref and the header, or a
// header alone) go through the request bell instead of ZeroMQ.
//
// Thread safety: none; used by its Channel's thread. Messages decoded from
// the reply ring may be dropped on any thread.
#ifndef PST_TRANSPORT_SHM_CLIENT_LINK_H_
#define PST_TRANSPORT_SHM_CLIENT_LINK_H_

#include <cstdint>
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

class ShmClientLink {
 public:
  // `peer_name` and `endpoint` are the channel's, for the logs.
  ShmClientLink(ShmOptions options, std::string peer_name, std::string endpoint);
  ~ShmClientLink();
  ShmClientLink(const ShmClientLink&) = delete;
  ShmClientLink& operator=(const ShmClientLink&) = delete;

  // Sends an encoded request (header, tensor frames) through the request
  // bell when it can. Returns what ZeroMQ must carry instead: nothing when
  // the bell took it; otherwise the same frames, with an offer in front, or
  // a ref and the header alone when the payload went into the ring (the
  // bell is not in use yet, the server is gone, the frames are too long, or
  // its pipe is full).
  std::vector<zmq::message_t> Send(std::vector<zmq::message_t> frames, uint64_t request_id,
                                   uint64_t cluster_id);
  // Decodes a received message, reading its payload from the reply ring
  // when it starts with a ref.
  StatusOr<ReceivedMessage> Incoming(std::vector<zmq::message_t> frames, size_t max_message_bytes);

  // The next message the server sent through the reply bell, decoded as
  // Incoming does; nullopt when none waits.
  StatusOr<std::optional<ReceivedMessage>> ReadFromBell(size_t max_message_bytes);
  // The reply bell's descriptor, readable when a message waits; -1: none.
  int reply_bell_fd() const { return reply_bell_ ? reply_bell_->fd() : -1; }

  // Whether payloads go through the rings now (the server attached).
  bool attached() const { return attached_; }
  // Whether requests' headers go through the request bell now.
  bool bells_in_use() const { return bells_confirmed_; }

 private:
  // The frames for a request once its payload went into the ring, if it
  // could (Send's return). `*server_alive`: the server was seen alive.
  std::vector<zmq::message_t> Outgoing(std::vector<zmq::message_t> frames, uint64_t request_id,
                                       uint64_t cluster_id, bool* server_alive);
  // Makes the two segments for `cluster_id`; false (logged once) when this
  // link does not use shared memory. `*server_alive`: existing rings' reader
  // was seen alive (false for new rings).
  bool Ready(uint64_t cluster_id, bool* server_alive);
  // The bytes of each of a new pair of rings: options_.ring_bytes, or less
  // where /dev/shm has little free (ring_size.h, logged); 0, and this link
  // disabled, when none fit.
  size_t RingBytes();
  // Drops the rings: the server is gone, refused them, or the cluster changed.
  void Reset();
  // Gives up on shared memory for this link, saying why once.
  void Disable(const std::string& why);
  // The server took the offer: payloads go through the rings from now on.
  void MarkAttached();
  ShmRef Ref(ShmRefKind kind, uint64_t sequence) const;
  // Makes the two bells beside the segments; without them (logged) only
  // the payloads skip ZeroMQ.
  void MakeBells();
  void DropBells();

  const ShmOptions options_;
  const std::string peer_name_;
  const std::string endpoint_;
  int on_this_host_ = -1;  // -1: not asked yet
  bool disabled_ = false;

  uint64_t cluster_id_ = 0;
  std::unique_ptr<ShmSegment> request_segment_;
  std::unique_ptr<ShmRingWriter> request_writer_;
  std::shared_ptr<ShmInbox> reply_inbox_;
  std::string reply_ring_;  // its name (the inbox may outlive the name)
  uint64_t next_sequence_ = 0;
  // The first request that carried the offer (0: none yet); a reply to it
  // or a later one with no server attached means the server declined.
  uint64_t offer_request_id_ = 0;
  bool attached_ = false;
  std::unique_ptr<ShmBell> request_bell_;
  std::unique_ptr<ShmBell> reply_bell_;
  // A message came through the reply bell: the server reads the request bell.
  bool bells_confirmed_ = false;
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_CLIENT_LINK_H_
