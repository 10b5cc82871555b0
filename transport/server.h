// RpcServer: the server side of the protocol, a ROUTER socket bound to one
// endpoint.
//
// One I/O thread owns the ROUTER socket: it receives, verifies (DecodeMessage
// and the cluster id) and queues requests; `num_threads` handler threads run
// the Handler and hand replies back to the I/O thread over an inproc socket.
// Requests that fail verification are answered with an ErrorReply and never
// reach the handler. The Handler must not block for long and must not crash
// on any input: it is called concurrently from the handler threads. A
// handler that cannot answer yet (a worker waiting for its next token)
// calls context.Defer() and answers later, from any thread, with
// SendDeferred().
#ifndef PST_TRANSPORT_SERVER_H_
#define PST_TRANSPORT_SERVER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "transport/curve.h"
#include "transport/message.h"
#include "transport/zap_authenticator.h"

namespace pst {

// The return address of a request whose reply is sent later.
struct DeferredReply {
  zmq::message_t routing_id;
  uint64_t request_id = 0;
};

// Given to the handler with each request.
class RequestContext {
 public:
  RequestContext(zmq::message_t* routing_id, uint64_t request_id,
                 std::string peer_address = "")
      : routing_id_(routing_id),
        request_id_(request_id),
        peer_address_(std::move(peer_address)) {}
  // Takes the request's return address: the handler's return value is then
  // ignored and the reply must go through RpcServer::SendDeferred.
  DeferredReply Defer();
  bool deferred() const { return deferred_; }
  // The numeric IP address the request came from, as the kernel saw it
  // ("127.0.0.1"; libzmq's "Peer-Address"); empty when unknown.
  const std::string& peer_address() const { return peer_address_; }

 private:
  zmq::message_t* routing_id_;
  uint64_t request_id_;
  std::string peer_address_;
  bool deferred_ = false;
};

inline constexpr size_t kSlowestPeerBytesPerSecond = size_t{10} << 20;

struct ServerOptions {
  std::string name;      // "ps:0", for logs and error messages
  std::string endpoint;  // "tcp://127.0.0.1:2222"
  wire::Role role = wire::Role::Unknown;
  int32_t index = 0;
  // Counted with FrameCost as the frames are taken from ZeroMQ; ZeroMQ
  // itself limits each frame to this (it holds a message until its last
  // frame has arrived, see server.cc).
  size_t max_message_bytes = size_t{1} << 30;
  // A connection is dropped, with the incomplete message it holds, when it
  // has not finished its handshake within peer_timeout, or when it leaves a
  // heartbeat (sent every peer_timeout / 2) unanswered for peer_timeout
  // plus the time the largest frame takes at kSlowestPeerBytesPerSecond
  // (the answer queues behind the frame being sent).
  std::chrono::milliseconds peer_timeout{10000};
  int num_threads = 2;
  // Cluster id of the server; 0 = not yet known (accepts any, see
  // set_cluster_id). Once known, requests from other clusters are refused,
  // except those of `open_types` that carry id 0 (a worker joining).
  uint64_t cluster_id = 0;
  std::vector<wire::MessageType> open_types;
  // CURVE: encrypt, and accept only clients holding the cluster's key.
  std::optional<CurveKeys> curve;
};

class RpcServer {
 public:
  using Handler =
      std::function<OutgoingMessage(const ReceivedMessage&, RequestContext&)>;

  // `context` is borrowed and must outlive the server.
  RpcServer(zmq::context_t& context, ServerOptions options, Handler handler);
  ~RpcServer();  // Stop() and join.

  // Binds and starts the threads. Fails with Unavailable naming the endpoint
  // when the address cannot be bound.
  Status Start();
  // Asks the server to stop: replies already being computed are still sent.
  // Thread-safe; may be called from a handler.
  void Stop();
  // Blocks until the server has stopped.
  void Wait();
  // Blocks until the server has stopped or `timeout` passed; true: stopped.
  bool WaitFor(std::chrono::milliseconds timeout);

  // The endpoint actually bound (resolves a "tcp://127.0.0.1:*" wildcard).
  const std::string& bound_endpoint() const { return bound_endpoint_; }
  // Sends the reply of a deferred request. Thread-safe.
  void SendDeferred(DeferredReply to, const OutgoingMessage& reply);

  uint64_t cluster_id() const { return cluster_id_.load(); }
  void set_cluster_id(uint64_t id) { cluster_id_.store(id); }
  uint64_t bytes_in() const { return bytes_in_.load(); }
  uint64_t bytes_out() const { return bytes_out_.load(); }
  // Requests queued for a handler thread right now.
  size_t queue_depth() const;

 private:
  struct Job {
    zmq::message_t routing_id;
    ReceivedMessage request;
    std::string peer_address;
  };

  void IoLoop(zmq::socket_t& router, zmq::socket_t& replies,
              zmq::socket_t& monitor);
  void HandlerLoop(int thread_index);
  // Takes one message from the router, or returns false when none is
  // ready. Frames past max_message_bytes are released as they are taken:
  // then only the routing id and the header are kept, and *too_large is set.
  bool ReceiveRequest(zmq::socket_t& router,
                      std::vector<zmq::message_t>* frames, bool* too_large);
  void OnRequest(zmq::socket_t& router, std::vector<zmq::message_t> frames,
                 bool too_large);
  // Refusals carry cluster id 0: a stranger must not learn the cluster's.
  void SendRefusal(zmq::socket_t& router, zmq::message_t routing_id,
                   const Status& status, uint64_t request_id);
  Status CheckClusterId(const ReceivedMessage& request) const;

  zmq::context_t& context_;
  const ServerOptions options_;
  const Handler handler_;
  const std::string inproc_endpoint_;
  const std::string monitor_endpoint_;
  std::string bound_endpoint_;  // set by Start()
  std::atomic<uint64_t> cluster_id_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> bytes_in_{0};
  std::atomic<uint64_t> bytes_out_{0};

  mutable std::mutex mu_;
  std::condition_variable jobs_cv_;
  std::deque<Job> jobs_;       // guarded by mu_
  int jobs_in_flight_ = 0;     // guarded by mu_: popped, reply not yet handed back
  bool handlers_exit_ = false; // guarded by mu_

  std::unique_ptr<ZapAuthenticator> authenticator_;  // with options_.curve

  // Deferred replies go to the I/O thread through this socket; any thread
  // may use it while holding deferred_mu_.
  std::mutex deferred_mu_;
  std::unique_ptr<zmq::socket_t> deferred_out_;  // guarded by deferred_mu_

  std::thread io_thread_;
  std::vector<std::thread> handler_threads_;
  std::mutex stopped_mu_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;  // guarded by stopped_mu_
};

}  // namespace pst

#endif  // PST_TRANSPORT_SERVER_H_
