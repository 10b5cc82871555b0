#include "transport/channel.h"

#include <algorithm>

namespace pst {

Channel::Channel(zmq::context_t& context, ChannelOptions options)
    : options_(std::move(options)), socket_(context, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  // A send blocks while the peer has no connection (down, or refusing our
  // CURVE handshake): bounded by the same deadline as a reply.
  socket_.set(zmq::sockopt::sndtimeo, options_.rpc_timeout_ms);
  if (options_.curve) MakeCurveClient(socket_, *options_.curve);
  socket_.set(zmq::sockopt::maxmsgsize,
              static_cast<int64_t>(options_.max_message_bytes));
  socket_.connect(options_.endpoint);
}

Clock::time_point Channel::DefaultDeadline() const {
  return Clock::now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
}

StatusOr<uint64_t> Channel::Send(const OutgoingMessage& request) {
  size_t bytes = 0;
  for (const OutTensor& t : request.tensors) bytes += t.tensor.num_bytes();
  if (bytes > options_.max_message_bytes) {
    return ResourceExhausted("request to " + options_.peer_name + " of " +
                             std::to_string(bytes) +
                             " bytes exceeds --max_message_bytes=" +
                             std::to_string(options_.max_message_bytes));
  }
  const uint64_t id = next_request_id_++;
  Envelope envelope{id, options_.cluster_id, options_.role, options_.index};
  std::vector<zmq::message_t> frames = EncodeMessage(request, envelope);
  for (size_t i = 0; i < frames.size(); ++i) {
    auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore
                                       : zmq::send_flags::none;
    if (!socket_.send(frames[i], flags)) {
      return DeadlineExceeded("could not send to " + options_.peer_name + " (" +
                              options_.endpoint + ") within --rpc_timeout_ms");
    }
  }
  return id;
}

StatusOr<ReceivedMessage> Channel::ReadOne() {
  std::vector<zmq::message_t> frames;
  zmq::message_t frame;
  do {
    if (!socket_.recv(frame, zmq::recv_flags::dontwait)) {
      return Unavailable("no message ready from " + options_.peer_name);
    }
    frames.push_back(std::move(frame));
  } while (frames.back().more());
  return DecodeMessage(std::move(frames), options_.max_message_bytes);
}

void Channel::DiscardReplies() {
  while (ReadOne().status().code() != Code::kUnavailable) {
  }
}

Status Channel::ReplyError(const ReceivedMessage& reply) const {
  Status status = reply.status();
  if (status.ok()) return status;
  return Status(status.code(), options_.peer_name + ": " + status.message());
}

StatusOr<ReceivedMessage> Channel::Receive(uint64_t request_id,
                                           Clock::time_point deadline) {
  return ReceiveAny({request_id}, deadline);
}

StatusOr<ReceivedMessage> Channel::ReceiveAny(
    const std::vector<uint64_t>& request_ids, Clock::time_point deadline) {
  for (;;) {
    for (;;) {  // drain what is ready
      StatusOr<ReceivedMessage> reply = ReadOne();
      if (!reply.ok()) {
        if (reply.status().code() == Code::kUnavailable) break;
        LOG(WARNING) << "dropping undecodable reply from " << options_.peer_name
                     << ": " << reply.status().ToString();
        continue;
      }
      if (std::find(request_ids.begin(), request_ids.end(),
                    reply->request_id()) == request_ids.end()) {
        continue;  // answers an abandoned request
      }
      PST_RETURN_IF_ERROR(ReplyError(*reply));
      return reply;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) {
      return DeadlineExceeded("no reply from " + options_.peer_name + " (" +
                              options_.endpoint + ") within --rpc_timeout_ms");
    }
    zmq::pollitem_t item = {socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
  }
}

StatusOr<ReceivedMessage> Channel::Call(const OutgoingMessage& request) {
  PST_ASSIGN_OR_RETURN(uint64_t id, Send(request));
  return Receive(id, DefaultDeadline());
}

void PendingCalls::Add(Channel* channel, uint64_t request_id) {
  channels_.push_back(channel);
  request_ids_.push_back(request_id);
}

Status PendingCalls::WaitAll(Clock::time_point deadline, const std::atomic<bool>* interrupt) {
  const size_t n = channels_.size();
  replies_.clear();
  replies_.resize(n);
  std::vector<bool> done(n, false);
  size_t remaining = n;
  Status first_error;
  std::vector<zmq::pollitem_t> items(n);
  while (remaining > 0) {
    if (interrupt != nullptr && interrupt->load()) return Aborted("interrupted by a signal");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      std::string silent;
      for (size_t i = 0; i < n; ++i) {
        if (done[i]) continue;
        if (!silent.empty()) silent += ", ";
        silent += channels_[i]->peer_name() + " (" + channels_[i]->endpoint() + ")";
      }
      return DeadlineExceeded("no reply from " + silent +
                              " within --rpc_timeout_ms");
    }
    for (size_t i = 0; i < n; ++i) {
      items[i] = {channels_[i]->socket().handle(), 0,
                  static_cast<short>(done[i] ? 0 : ZMQ_POLLIN), 0};
    }
    if (interrupt != nullptr) left = std::min(left, std::chrono::milliseconds(100));
    zmq::poll(items.data(), n, left);
    for (size_t i = 0; i < n; ++i) {
      if (done[i] || !(items[i].revents & ZMQ_POLLIN)) continue;
      Channel* channel = channels_[i];
      // Drain what is ready. Replies may answer any of this channel's
      // pending requests, or an abandoned one (then they are dropped).
      for (;;) {
        StatusOr<ReceivedMessage> reply = channel->ReadOne();
        if (!reply.ok()) {
          if (reply.status().code() == Code::kUnavailable) break;  // drained
          LOG(WARNING) << "dropping undecodable reply from "
                       << channel->peer_name() << ": "
                       << reply.status().ToString();
          continue;
        }
        for (size_t j = 0; j < n; ++j) {
          if (done[j] || channels_[j] != channel ||
              request_ids_[j] != reply->request_id()) {
            continue;
          }
          Status status = channel->ReplyError(*reply);
          if (!status.ok() && first_error.ok()) first_error = status;
          replies_[j] = std::move(reply).value();
          done[j] = true;
          --remaining;
          break;
        }
      }
    }
  }
  return first_error;
}

}  // namespace pst
