// Channel: the client side of the protocol, one DEALER socket to one server.
//
// Requests are pipelined: Send() returns at once with a request id and
// several requests (to one or many channels) can be in flight together;
// Receive()/ReceiveAll() collect the replies by id. Every wait has a
// deadline; on expiry the call fails with DeadlineExceeded naming the peer.
//
// Thread safety: none. A Channel (and its socket) is owned by one thread.
#ifndef PST_TRANSPORT_CHANNEL_H_
#define PST_TRANSPORT_CHANNEL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "common/status.h"
#include "transport/curve.h"
#include "transport/message.h"

namespace pst {

using Clock = std::chrono::steady_clock;

struct ChannelOptions {
  std::string peer_name;  // "ps:1", used in error messages
  std::string endpoint;   // "tcp://127.0.0.1:2222"
  uint64_t cluster_id = 0;
  wire::Role role = wire::Role::Client;
  int32_t index = 0;
  int rpc_timeout_ms = 30000;
  size_t max_message_bytes = size_t{1} << 30;
  std::optional<CurveKeys> curve;  // the cluster's keys when CURVE is on
};

class Channel {
 public:
  // `context` is borrowed and must outlive the channel.
  Channel(zmq::context_t& context, ChannelOptions options);

  const std::string& peer_name() const { return options_.peer_name; }
  const std::string& endpoint() const { return options_.endpoint; }
  uint64_t cluster_id() const { return options_.cluster_id; }
  void set_cluster_id(uint64_t id) { options_.cluster_id = id; }
  Clock::time_point DefaultDeadline() const;

  // Sends a request; returns its id. Fails (without sending) when the
  // message is larger than max_message_bytes.
  StatusOr<uint64_t> Send(const OutgoingMessage& request);

  // Waits for the reply to `request_id`. A reply whose status is an error
  // becomes that error, prefixed with the peer name. Replies to other
  // (abandoned) requests are discarded.
  StatusOr<ReceivedMessage> Receive(uint64_t request_id,
                                    Clock::time_point deadline);
  // Waits for the first reply to any of `request_ids` (requests re-sent
  // while waiting for one answer); other replies are discarded.
  StatusOr<ReceivedMessage> ReceiveAny(const std::vector<uint64_t>& request_ids,
                                       Clock::time_point deadline);

  // Drops every reply already received (fire-and-forget senders).
  void DiscardReplies();

  // Send + Receive with the default deadline.
  StatusOr<ReceivedMessage> Call(const OutgoingMessage& request);

  zmq::socket_t& socket() { return socket_; }

  // Reads one message from the socket and decodes it; for ReceiveAll.
  StatusOr<ReceivedMessage> ReadOne();

 private:
  Status ReplyError(const ReceivedMessage& reply) const;

  ChannelOptions options_;
  zmq::socket_t socket_;
  uint64_t next_request_id_ = 1;
  friend class PendingCalls;
};

// The replies of requests in flight on several channels at once, e.g. a
// worker's pulls from all ps shards.
class PendingCalls {
 public:
  void Add(Channel* channel, uint64_t request_id);
  // Waits until every reply has arrived or the deadline passes. Returns the
  // first error (a reply's error status or DeadlineExceeded naming the
  // peers still silent). replies()[i] answers the i-th Add(). Once
  // `*interrupt` is set (a signal: the process is stopping) the wait ends
  // within 100 ms with Aborted.
  Status WaitAll(Clock::time_point deadline, const std::atomic<bool>* interrupt = nullptr);
  std::vector<ReceivedMessage>& replies() { return replies_; }

 private:
  std::vector<Channel*> channels_;
  std::vector<uint64_t> request_ids_;
  std::vector<ReceivedMessage> replies_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_CHANNEL_H_
