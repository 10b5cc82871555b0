#include "transport/channel.h"

#include <glog/logging.h>

#include <algorithm>

#include "transport/frames.h"
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
    frames = shm_->Send(std::move(frames), envelope.request_id, envelope.cluster_id);
    if (frames.empty()) return Status::OK();  // through the bell
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
  if (first_frame_) {
    frames.push_back(std::move(*first_frame_));
    first_frame_.reset();
  }
  zmq::message_t frame;
  // The rest of a message arrives with its first frame.
  while (frames.empty() || frames.back().more()) {
    if (!socket_.recv(frame, zmq::recv_flags::dontwait)) {
      return Unavailable("no message ready from " + peer_name());
    }
    frames.push_back(std::move(frame));
  }
  if (shm_) return shm_->Incoming(std::move(frames), options().max_message_bytes);
  return DecodeMessage(std::move(frames), options().max_message_bytes);
}

bool Channel::ReceiveFirstFrame(std::chrono::milliseconds timeout) {
  zmq::message_t frame;
  const int64_t millis = std::clamp<int64_t>(timeout.count(), 0, INT32_MAX);
  socket_.set(zmq::sockopt::rcvtimeo, static_cast<int>(millis));
  try {
    if (!socket_.recv(frame)) return false;  // timed out
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;  // the caller's loop comes back
    throw;
  }
  first_frame_ = std::move(frame);
  return true;
}

void Channel::Poll(const std::vector<Connection*>& connections, const std::vector<bool>& wanted,
                   std::chrono::milliseconds timeout, std::vector<bool>* ready) {
  // Kept from call to call on this thread: a client waits for every reply.
  thread_local std::vector<Channel*> channels;
  thread_local std::vector<zmq::socket_t*> sockets;
  thread_local std::vector<int> bells;
  channels.clear();
  sockets.clear();
  bells.clear();
  bool kept_frame = false;
  for (size_t i = 0; i < connections.size(); ++i) {
    auto* channel = dynamic_cast<Channel*>(connections[i]);
    CHECK(channel != nullptr) << "a wait over connections of different transports";
    channels.push_back(channel);
    sockets.push_back(&channel->socket_);
    bells.push_back(channel->shm_ ? channel->shm_->reply_bell_fd() : -1);
    kept_frame |= wanted[i] && channel->first_frame_.has_value();
  }
  ready->assign(connections.size(), false);
  // A message already begun is ready; its socket may show nothing more.
  if (kept_frame) {
    for (size_t i = 0; i < ready->size(); ++i) {
      (*ready)[i] = wanted[i] && channels[i]->first_frame_.has_value();
    }
    return;
  }
  const auto waited = std::find(wanted.begin(), wanted.end(), true);
  const bool one_socket =
      waited != wanted.end() && std::find(waited + 1, wanted.end(), true) == wanted.end();
  const size_t only = waited - wanted.begin();
  if (one_socket && bells[only] < 0) {
    (*ready)[only] = channels[only]->ReceiveFirstFrame(timeout);
    return;
  }
  *ready = WaitForMessages(sockets, bells, wanted, timeout);
}

}  // namespace pst
