#include "transport/channel.h"

#include <glog/logging.h>

#include "transport/socket_wait.h"

namespace pst {

Channel::Channel(zmq::context_t& context, ChannelOptions options, ShmOptions shm)
    : Connection(std::move(options)), socket_(context, zmq::socket_type::dealer) {
  if (shm.mode != ShmMode::kOff) {
    shm_ = std::make_unique<ShmClientLink>(shm, peer_name(), endpoint());
  }
  socket_.set(zmq::sockopt::linger, 0);
  // A send blocks while the peer has no connection (down, or refusing our
  // CURVE handshake): bounded by the same deadline as a reply.
  socket_.set(zmq::sockopt::sndtimeo, this->options().rpc_timeout_ms);
  if (this->options().curve) MakeCurveClient(socket_, *this->options().curve);
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(this->options().max_message_bytes));
  socket_.connect(this->options().endpoint);
}

Status Channel::Post(const OutgoingMessage& request, const Envelope& envelope) {
  std::vector<zmq::message_t> frames = EncodeMessage(request, envelope);
  if (shm_) {
    frames = shm_->Outgoing(std::move(frames), envelope.request_id, envelope.cluster_id);
    if (shm_->SendOverBell(frames)) return Status::OK();
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    if (!socket_.send(frames[i], flags)) {
      return DeadlineExceeded("could not send to " + peer_name() + " (" + endpoint() +
                              ") within its rpc_timeout_ms (" +
                              std::to_string(options().rpc_timeout_ms) + " ms)");
    }
  }
  return Status::OK();
}

StatusOr<ReceivedMessage> Channel::ReadOne() {
  if (shm_) {
    PST_ASSIGN_OR_RETURN(std::optional<ReceivedMessage> from_bell,
                         shm_->ReadFromBell(options().max_message_bytes));
    if (from_bell) return std::move(*from_bell);
  }
  std::vector<zmq::message_t> frames;
  frames.reserve(4);  // a header and a few tensors without regrowing
  zmq::message_t frame;
  do {
    if (!socket_.recv(frame, zmq::recv_flags::dontwait)) {
      return Unavailable("no message ready from " + peer_name());
    }
    frames.push_back(std::move(frame));
  } while (frames.back().more());
  if (shm_) return shm_->Incoming(std::move(frames), options().max_message_bytes);
  return DecodeMessage(std::move(frames), options().max_message_bytes);
}

std::vector<bool> Channel::Poll(const std::vector<Connection*>& connections,
                                const std::vector<bool>& wanted,
                                std::chrono::milliseconds timeout) {
  // Kept from call to call on this thread: a client waits for every reply.
  thread_local std::vector<zmq::socket_t*> sockets;
  thread_local std::vector<int> bells;
  sockets.clear();
  bells.clear();
  for (Connection* connection : connections) {
    auto* channel = dynamic_cast<Channel*>(connection);
    CHECK(channel != nullptr) << "a wait over connections of different transports";
    sockets.push_back(&channel->socket());
    bells.push_back(channel->shm_ ? channel->shm_->reply_bell_fd() : -1);
  }
  return WaitForMessages(sockets, bells, wanted, timeout);
}

}  // namespace pst
