// The transport seam: what the services need of a network, and nothing of
// how it is made. Two implementations: ZeroMQ (Channel, RpcServer: the real
// one, zmq_transport.h) and in-process (in_process.h: for unit tests of the
// services, no sockets, no processes).
//
// Client side: a Connection to one server. Requests are pipelined: Send()
// returns at once with a request id; Receive()/ReceiveAny() and
// PendingCalls::WaitAll() collect replies by id. Every wait has a deadline;
// on expiry the call fails with DeadlineExceeded naming the peer. A reply
// whose status is an error becomes that error, prefixed with the peer name.
// Thread safety: none; a Connection is owned by one thread.
//
// Server side: a Server runs a Handler for each verified request of its
// cluster (see ServerOptions) and sends its reply; a handler may Defer() and
// reply later from any thread with SendDeferred().
#ifndef PST_TRANSPORT_TRANSPORT_H_
#define PST_TRANSPORT_TRANSPORT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/channel_options.h"
#include "transport/message.h"
#include "transport/request_context.h"
#include "transport/server_options.h"

namespace pst {

class Connection {
 public:
  explicit Connection(ChannelOptions options) : options_(std::move(options)) {}
  virtual ~Connection() = default;

  const std::string& peer_name() const { return options_.peer_name; }
  const std::string& endpoint() const { return options_.endpoint; }
  uint64_t cluster_id() const { return options_.cluster_id; }
  void set_cluster_id(uint64_t id) { options_.cluster_id = id; }
  MonotonicClock::TimePoint DefaultDeadline() const;

  // Sends a request; returns its id. Fails (without sending) when the
  // message is larger than max_message_bytes.
  StatusOr<uint64_t> Send(const OutgoingMessage& request);
  // Waits for the reply to `request_id`. Replies to other (abandoned)
  // requests are discarded.
  StatusOr<ReceivedMessage> Receive(uint64_t request_id, MonotonicClock::TimePoint deadline);
  // Waits for the first reply to any of `request_ids` (requests re-sent
  // while waiting for one answer); other replies are discarded.
  StatusOr<ReceivedMessage> ReceiveAny(const std::vector<uint64_t>& request_ids,
                                       MonotonicClock::TimePoint deadline);
  // Drops every reply already received (fire-and-forget senders).
  void DiscardReplies();
  // Send + Receive with the default deadline.
  StatusOr<ReceivedMessage> Call(const OutgoingMessage& request);
  // The next reply received, decoded; Unavailable when none is ready.
  virtual StatusOr<ReceivedMessage> ReadOne() = 0;

 protected:
  const ChannelOptions& options() const { return options_; }
  // Hands one encoded request to the network. DeadlineExceeded when it
  // cannot be handed over within rpc_timeout_ms.
  virtual Status Post(const OutgoingMessage& request, const Envelope& envelope) = 0;
  // Waits up to `timeout` until one of `connections` (all of this one's
  // kind) with wanted[i] may have a reply ready; sets (*ready)[i] for those
  // that may (*ready is resized to connections.size()).
  virtual void Poll(const std::vector<Connection*>& connections, const std::vector<bool>& wanted,
                    std::chrono::milliseconds timeout, std::vector<bool>* ready) = 0;

 private:
  friend class PendingCalls;
  Status ReplyError(const ReceivedMessage& reply) const;

  ChannelOptions options_;
  uint64_t next_request_id_ = 1;
};

// The replies of requests in flight on several connections (of one kind) at
// once, e.g. a worker's pulls from all ps shards.
class PendingCalls {
 public:
  void Add(Connection* connection, uint64_t request_id);
  // Waits until every reply has arrived or the deadline passes. Returns the
  // first error (a reply's error status or DeadlineExceeded naming the
  // peers still silent). replies()[i] answers the i-th Add(). Once
  // `*interrupt` is set (a signal: the process is stopping) the wait ends
  // within 100 ms with Aborted.
  // With `needed` (see WaitSome), only the needed calls are waited for.
  Status WaitAll(MonotonicClock::TimePoint deadline, const std::atomic<bool>* interrupt = nullptr,
                 const std::vector<bool>& needed = {});
  // The same, keeping what arrived when the deadline passes: call again to
  // wait for the rest (after a Redirect, say). Returns the replies still
  // missing; Aborted (interrupted) is returned as WaitAll returns it.
  // With `needed` (one flag per call), returns once the needed calls are
  // answered: the others stay in flight, and a reply of theirs that
  // arrives meanwhile is kept, not dropped; the count is of needed ones.
  StatusOr<size_t> WaitSome(MonotonicClock::TimePoint deadline,
                            const std::atomic<bool>* interrupt = nullptr,
                            const std::vector<bool>& needed = {});
  // Call i (not answered yet) is now `request_id` on `connection`: the
  // request was sent again elsewhere; a late reply to the old one is dropped.
  void Redirect(size_t i, Connection* connection, uint64_t request_id);
  bool answered(size_t i) const { return calls_[i].done; }
  // The reply's status of an answered call (its error, prefixed with the peer).
  const Status& status(size_t i) const { return calls_[i].status; }
  // Marks answered call i as waiting again (it is about to be redirected).
  void Reopen(size_t i);
  std::vector<ReceivedMessage>& replies() { return replies_; }
  // Forgets every call, keeping the memory for the next ones.
  void Clear();

 private:
  // The peers of the (needed) calls not answered yet: "ps:1 (tcp://...)".
  std::string Silent(const std::vector<bool>& needed) const;

  std::vector<Connection*> connections_;
  std::vector<ReceivedMessage> replies_;
  struct Call {
    uint64_t request_id = 0;
    bool done = false;
    Status status;  // of the reply, once done
  };
  std::vector<Call> calls_;
  size_t remaining_ = 0;
  // WaitSome's, kept so that a wait allocates nothing.
  std::vector<bool> wanted_;
  std::vector<bool> ready_;
};

class Server : public ReplySender {
 public:
  using Handler = std::function<OutgoingMessage(const ReceivedMessage&, RequestContext&)>;

  // Binds and starts serving. Unavailable naming the endpoint when the
  // address cannot be bound.
  virtual Status Start() = 0;
  // Asks the server to stop: replies already being computed are still sent.
  // Thread-safe; may be called from a handler.
  virtual void Stop() = 0;
  // Blocks until the server has stopped.
  virtual void Wait() = 0;
  // Blocks until the server has stopped or `timeout` passed; true: stopped.
  virtual bool WaitFor(std::chrono::milliseconds timeout) = 0;
  // The endpoint actually bound (resolves a wildcard port).
  virtual const std::string& bound_endpoint() const = 0;
  virtual uint64_t cluster_id() const = 0;
  virtual void set_cluster_id(uint64_t id) = 0;
  virtual uint64_t bytes_in() const = 0;
  virtual uint64_t bytes_out() const = 0;
  // Requests waiting for a handler right now.
  virtual size_t queue_depth() const = 0;
};

// Makes connections and servers of one kind.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::unique_ptr<Connection> Connect(ChannelOptions options) = 0;
  virtual std::unique_ptr<Server> Listen(ServerOptions options, Server::Handler handler) = 0;
};

}  // namespace pst

#endif  // PST_TRANSPORT_TRANSPORT_H_
