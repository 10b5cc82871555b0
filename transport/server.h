// RpcServer: the server side of the protocol, a ROUTER socket bound to one
// endpoint.
//
// One I/O thread owns the ROUTER socket: it receives, verifies (DecodeMessage
// and the cluster id) and queues requests; `num_threads` handler threads run
// the Handler and hand replies back to the I/O thread through the router
// itself (an inproc connection), so that with nothing else to wait for the
// I/O thread sleeps inside the router's receive.
// Requests that ServerOptions::serve_inline picks are instead served by the
// I/O thread itself, once it has taken every request ready, in arrival
// order, and their replies sent at once: no thread hand-off. Requests that
// fail verification are answered with an ErrorReply and never reach the
// handler. The Handler must not block for long and must not crash on any
// input: it is called concurrently from the handler threads and the I/O
// thread. A
// handler that cannot answer yet (a worker waiting for its next token)
// calls context.Defer() and answers later, from any thread, with
// SendDeferred().
#ifndef PST_TRANSPORT_SERVER_H_
#define PST_TRANSPORT_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "common/mutex.h"
#include "common/status.h"
#include "transport/curve.h"
#include "transport/message.h"
#include "transport/request_context.h"
#include "transport/server_options.h"
#include "transport/shm_options.h"
#include "transport/shm_server_peers.h"
#include "transport/socket_wait.h"
#include "transport/transport.h"
#include "transport/zap_authenticator.h"

namespace pst {

class RpcServer : public Server {
 public:
  // `context` is borrowed and must outlive the server. With `shm` on, the
  // server takes the shared-memory rings that clients on this host offer
  // (ShmServerPeers).
  RpcServer(zmq::context_t& context, ServerOptions options, Handler handler,
            ShmOptions shm = ShmOptions());
  ~RpcServer() override;  // Stop() and join.

  // Binds and starts the threads. Fails with Unavailable naming the endpoint
  // when the address cannot be bound.
  Status Start() override;
  // Asks the server to stop: replies already being computed are still sent.
  // Thread-safe; may be called from a handler.
  void Stop() override;
  // Blocks until the server has stopped.
  void Wait() override;
  // Blocks until the server has stopped or `timeout` passed; true: stopped.
  bool WaitFor(std::chrono::milliseconds timeout) override;

  // The endpoint actually bound (resolves a "tcp://127.0.0.1:*" wildcard).
  const std::string& bound_endpoint() const override { return bound_endpoint_; }
  // Sends the reply of a deferred request. Thread-safe.
  void SendDeferred(DeferredReply to, const OutgoingMessage& reply) override;

  uint64_t cluster_id() const override { return cluster_id_.load(); }
  void set_cluster_id(uint64_t id) override { cluster_id_.store(id); }
  uint64_t bytes_in() const override { return bytes_in_.load(); }
  uint64_t bytes_out() const override { return bytes_out_.load(); }
  // Requests whose header came through a client's bell, not ZeroMQ.
  uint64_t requests_through_bells() const { return requests_through_bells_.load(); }
  // Requests received and not yet being served right now: queued for a
  // handler thread, or for the I/O thread (served inline).
  size_t queue_depth() const override;

 private:
  struct Job {
    zmq::message_t routing_id;
    ReceivedMessage request;
    std::string peer_address;
  };

  // What the I/O thread keeps from pass to pass, so that a pass allocates
  // nothing for it.
  struct IoScratch {
    std::vector<pollfd> bells;  // of the clients on this host
    std::vector<Job> inline_jobs;
    std::vector<zmq::message_t> message;
  };
  static constexpr size_t kRouterSocket = 0;  // the SocketWaiter's only socket

  void IoLoop(zmq::socket_t& router, zmq::socket_t& monitor);
  // Polls the router and the bells in scratch->bells, up to kIdleWait, then
  // serves what came; false when nothing did.
  bool PollRouterAndBells(zmq::socket_t& router, SocketWaiter& waiter, IoScratch* scratch,
                          bool* trim_due);
  // Reads the monitor's disconnection events; true when a connection
  // closed (its shared-memory rings are then dropped).
  bool TakeDisconnections(zmq::socket_t& monitor);
  void HandlerLoop(int thread_index);
  // A socket that brings replies to the I/O thread through the router:
  // one per handler thread (slot = its index) and one for deferred replies
  // (the slot after the last handler), each with its own routing id.
  std::unique_ptr<zmq::socket_t> ConnectReplySocket(int slot);
  bool IsReplyRoute(const zmq::message_t& routing_id) const;
  // Takes one message from the router, or returns false when none came:
  // `first_frame` says whether to wait for one (up to the router's receive
  // timeout) or not. A request's frames past max_message_bytes are
  // released as they are taken: then only the routing id and the header
  // are kept, and *too_large is set. A reply socket's frames are all kept.
  bool ReceiveMessage(zmq::socket_t& router, zmq::recv_flags first_frame,
                      std::vector<zmq::message_t>* frames, bool* too_large);
  // Acts on a message from the router: forwards a handler's reply, or
  // takes a request in (OnRequest) and serves what is inline.
  void OnRouterMessage(zmq::socket_t& router, std::vector<zmq::message_t>* message, bool too_large,
                       std::vector<Job>* inline_jobs, bool* trim_due);
  // Verifies a request (its frames after the routing id, from the router
  // or a client's bell), then queues it for a handler thread or, when
  // served inline, in *inline_jobs.
  void OnRequest(zmq::socket_t& router, zmq::message_t routing_id, std::string peer_address,
                 std::vector<zmq::message_t> frames, bool too_large, std::vector<Job>* inline_jobs);
  // Runs the handler on `job` on this thread: false when it deferred the
  // reply, else true with the reply's frames in *reply.
  bool Serve(Job& job, std::vector<zmq::message_t>* reply);
  // Serves and clears *inline_jobs; true when a reply went on the router.
  bool ServeInline(zmq::socket_t& router, std::vector<Job>* inline_jobs);
  // Sends a reply's frames to `routing_id`, its payload through that
  // client's reply ring when it has one, and the rest through its reply
  // bell when it has one. true when it went on the router.
  bool SendReply(zmq::socket_t& router, zmq::message_t& routing_id,
                 std::vector<zmq::message_t>& frames);
  // Refusals carry cluster id 0: a stranger must not learn the cluster's.
  void SendRefusal(zmq::socket_t& router, zmq::message_t routing_id, const Status& status,
                   uint64_t request_id);

  zmq::context_t& context_;
  const ServerOptions options_;
  const Handler handler_;
  const std::string inproc_endpoint_;
  const std::string reply_route_prefix_;
  const std::string monitor_endpoint_;
  std::string bound_endpoint_;  // set by Start()
  std::atomic<uint64_t> cluster_id_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> bytes_in_{0};
  std::atomic<uint64_t> bytes_out_{0};
  std::atomic<uint64_t> requests_through_bells_{0};

  mutable Mutex mu_;
  CondVar jobs_cv_;
  std::deque<Job> jobs_ GUARDED_BY(mu_);
  int jobs_in_flight_ GUARDED_BY(mu_) = 0;  // popped, reply not yet handed back
  std::atomic<size_t> inline_queued_{0};    // taken by the I/O thread, not yet served
  bool handlers_exit_ GUARDED_BY(mu_) = false;

  std::unique_ptr<ZapAuthenticator> authenticator_;  // with options_.curve
  ShmServerPeers shm_peers_;                         // used by the I/O thread only

  // Deferred replies go to the I/O thread through this reply socket; any
  // thread may use it while holding deferred_mu_.
  Mutex deferred_mu_;
  std::unique_ptr<zmq::socket_t> deferred_out_ GUARDED_BY(deferred_mu_);

  std::thread io_thread_;
  std::vector<std::thread> handler_threads_;
  Mutex stopped_mu_;
  CondVar stopped_cv_;
  bool stopped_ GUARDED_BY(stopped_mu_) = false;
};

}  // namespace pst

#endif  // PST_TRANSPORT_SERVER_H_
