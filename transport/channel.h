// Channel: the ZeroMQ Connection, one DEALER socket to one server (see
// transport.h for the contract); with shared memory on, tensor payloads to a
// server on this host go through a ShmClientLink instead of the socket, and
// once the link's bells work, the headers too.
//
// Thread safety: none. A Channel (and its socket) is owned by one thread.
#ifndef PST_TRANSPORT_CHANNEL_H_
#define PST_TRANSPORT_CHANNEL_H_

#include <chrono>
#include <memory>
#include <optional>
#include <vector>
#include <zmq.hpp>

#include "transport/shm_client_link.h"
#include "transport/shm_options.h"
#include "transport/transport.h"

namespace pst {

class Channel : public Connection {
 public:
  // `context` is borrowed and must outlive the channel.
  Channel(zmq::context_t& context, ChannelOptions options, ShmOptions shm = ShmOptions());

  // Whether tensor payloads go through shared memory now.
  bool shm_attached() const { return shm_ && shm_->attached(); }
  // Whether requests' headers go through the link's bell now.
  bool shm_bells_in_use() const { return shm_ && shm_->bells_in_use(); }
  // Reads one message from the link's reply bell or the socket and decodes
  // it.
  StatusOr<ReceivedMessage> ReadOne() override;

 protected:
  Status Post(const OutgoingMessage& request, const Envelope& envelope) override;
  // Waits for a message on the channels' sockets and reply bells
  // (WaitForMessages).
  void Poll(const std::vector<Connection*>& connections, const std::vector<bool>& wanted,
            std::chrono::milliseconds timeout, std::vector<bool>* ready) override;

 private:
  // Waits up to `timeout` for a message on the socket alone, with ZeroMQ's
  // own blocking receive: two system calls fewer than polling its
  // descriptor, as that needs a look at the socket before and after. The
  // message's first frame is kept in first_frame_ for ReadOne.
  bool ReceiveFirstFrame(std::chrono::milliseconds timeout);

  zmq::socket_t socket_;
  std::unique_ptr<ShmClientLink> shm_;  // null with shared memory off
  std::optional<zmq::message_t> first_frame_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_CHANNEL_H_
