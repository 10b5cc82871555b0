#include "transport/server.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <sstream>

#include "common/clock.h"
#include "common/thread_name.h"
#include "transport/frames.h"

namespace pst {
namespace {

std::string InprocEndpoint(const std::string& what, const void* self) {
  std::ostringstream s;
  s << "inproc://" << what << "-" << self;
  return s.str();
}

// How long the I/O thread sleeps before it does its idle work (forgetting
// departed shared-memory peers, giving freed memory back), and how often,
// at most, it reads the router's monitor while busy.
constexpr std::chrono::milliseconds kIdleWait{50};

// The start of the routing ids of the sockets that bring the handlers'
// replies in through the router: random, so that no remote peer can pass
// for one (a ROUTER refuses a second peer with a routing id in use, and a
// routing id must not start with a zero byte).
std::string RandomReplyRoutePrefix() {
  std::random_device random;
  std::string prefix(16, '\0');
  for (char& c : prefix) c = static_cast<char>(random());
  prefix[0] = 'R';
  return prefix;
}

int HeartbeatTimeoutMs(const ServerOptions& options) {
  const int64_t largest_frame_ms =
      static_cast<int64_t>(options.max_message_bytes / (kSlowestPeerBytesPerSecond / 1000));
  return static_cast<int>(
      std::min<int64_t>(INT_MAX, options.peer_timeout.count() + largest_frame_ms));
}

// Hands freed heap memory back to the system. glibc keeps what a burst
// freed (a refused message, closed connections) when other blocks sit above
// it in the heap, so without this the ps's resident memory only grows.
void GiveBackFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

size_t FramesBytes(const std::vector<zmq::message_t>& frames) {
  size_t bytes = 0;
  for (const zmq::message_t& frame : frames) bytes += frame.size();
  return bytes;
}

// Sends frames as one multipart message, the routing id first when given.
void SendFrames(zmq::socket_t& socket, zmq::message_t* routing_id,
                std::vector<zmq::message_t>& frames) {
  if (routing_id) socket.send(*routing_id, zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i) {
    socket.send(frames[i],
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

std::vector<zmq::message_t> RecvMultipart(zmq::socket_t& socket) {
  std::vector<zmq::message_t> frames;
  zmq::message_t frame;
  do {
    if (!socket.recv(frame, zmq::recv_flags::dontwait)) break;
    frames.push_back(std::move(frame));
  } while (frames.back().more());
  return frames;
}

// Best effort: the request id of a message that failed verification, if its
// header alone verifies.
uint64_t RequestIdOf(const zmq::message_t& header_frame) {
  std::unique_ptr<uint64_t[]> copy;
  const wire::Header* header = VerifiedHeader(header_frame, &copy);
  return header != nullptr ? header->request_id() : 0;
}

// The IP address of the peer that sent `frame` (empty when the transport
// has none): the kernel's, unlike everything in the header, which the
// sender writes.
std::string PeerAddress(const zmq::message_t& frame) {
  const char* address = zmq_msg_gets(frame.handle(), "Peer-Address");
  return address != nullptr ? address : "";
}

}  // namespace

RpcServer::RpcServer(zmq::context_t& context, ServerOptions options, Handler handler,
                     ShmOptions shm)
    : context_(context),
      options_(std::move(options)),
      handler_(std::move(handler)),
      inproc_endpoint_(InprocEndpoint("replies", this)),
      reply_route_prefix_(RandomReplyRoutePrefix()),
      monitor_endpoint_(InprocEndpoint("monitor", this)),
      cluster_id_(options_.cluster_id),
      shm_peers_(shm, options_.name) {}

RpcServer::~RpcServer() {
  Stop();
  if (io_thread_.joinable()) io_thread_.join();
  deferred_out_.reset();
  authenticator_.reset();
  {
    MutexLock lock(mu_);
    handlers_exit_ = true;
  }
  jobs_cv_.NotifyAll();
  for (auto& t : handler_threads_) t.join();
}

Status RpcServer::Start() {
  // Bind here, on the caller's thread, so a bad address fails Start(); the
  // sockets are then handed to the I/O thread, which alone uses them.
  auto router = std::make_shared<zmq::socket_t>(context_, zmq::socket_type::router);
  auto monitor = std::make_shared<zmq::socket_t>(context_, zmq::socket_type::pair);
  try {
    if (options_.curve) {
      authenticator_ = std::make_unique<ZapAuthenticator>(context_, *options_.curve);
      MakeCurveServer(*router, *options_.curve);
    }
    router->set(zmq::sockopt::linger, 0);
    router->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(options_.max_message_bytes));
    router->set(zmq::sockopt::router_mandatory, 0);
    // What a connection holds (an incomplete message, see IoLoop) is bounded
    // in time: silent or stalled peers are dropped.
    const int peer_timeout_ms = static_cast<int>(options_.peer_timeout.count());
    router->set(zmq::sockopt::handshake_ivl, peer_timeout_ms);
    router->set(zmq::sockopt::heartbeat_ivl, std::max(1, peer_timeout_ms / 2));
    router->set(zmq::sockopt::heartbeat_timeout, HeartbeatTimeoutMs(options_));
    router->bind(options_.endpoint);
    bound_endpoint_ = router->get(zmq::sockopt::last_endpoint);
    // The handlers' replies come in through the router too, so that the
    // I/O thread can sleep inside the router's receive (IoLoop).
    router->bind(inproc_endpoint_);
    router->set(zmq::sockopt::rcvtimeo, static_cast<int>(kIdleWait.count()));
    // Closed connections are reported so their memory can be given back.
    if (zmq_socket_monitor(router->handle(), monitor_endpoint_.c_str(), ZMQ_EVENT_DISCONNECTED) !=
        0) {
      throw zmq::error_t();
    }
    monitor->set(zmq::sockopt::linger, 0);
    // ZeroMQ's I/O thread blocks on a full monitor pipe, and the I/O
    // thread reads it only every kIdleWait: no limit (a burst of closed
    // connections queues one short event each).
    monitor->set(zmq::sockopt::rcvhwm, 0);
    monitor->connect(monitor_endpoint_);
  } catch (const zmq::error_t& e) {
    return Unavailable(options_.name + " cannot bind " + options_.endpoint + ": " + e.what());
  }
  {
    MutexLock lock(deferred_mu_);  // no other thread yet: for the analysis
    deferred_out_ = ConnectReplySocket(std::max(1, options_.num_threads));
  }
  for (int i = 0; i < std::max(1, options_.num_threads); ++i) {
    handler_threads_.emplace_back([this, i] { HandlerLoop(i); });
  }
  io_thread_ = std::thread([this, router, monitor] { IoLoop(*router, *monitor); });
  return Status::OK();
}

void RpcServer::Stop() { stopping_.store(true); }

void RpcServer::Wait() {
  MutexLock lock(stopped_mu_);
  while (!stopped_) stopped_cv_.Wait(stopped_mu_);
}

bool RpcServer::WaitFor(std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock().Now() + timeout;
  MutexLock lock(stopped_mu_);
  while (!stopped_ && stopped_cv_.WaitUntil(stopped_mu_, deadline)) {
  }
  return stopped_;
}

size_t RpcServer::queue_depth() const {
  MutexLock lock(mu_);
  return jobs_.size() + inline_queued_.load();
}

void RpcServer::SendRefusal(zmq::socket_t& router, zmq::message_t routing_id, const Status& status,
                            uint64_t request_id) {
  OutgoingMessage refusal;
  refusal.type = wire::MessageType::ErrorReply;
  refusal.status = status;
  Envelope envelope{request_id, /*cluster_id=*/0, options_.role, options_.index};
  std::vector<zmq::message_t> frames = EncodeMessage(refusal, envelope);
  bytes_out_ += FramesBytes(frames);
  SendFrames(router, &routing_id, frames);
}

// ZeroMQ hands a multipart message over only once all its frames have
// arrived, and limits (ZMQ_MAXMSGSZ) each frame, not their sum or number:
// until then the frames sit in ZeroMQ's queue, out of reach. What can be
// done here is to take the frames one by one, counting, and release those
// over the limit at once rather than gather and copy them.
bool RpcServer::ReceiveMessage(zmq::socket_t& router, zmq::recv_flags first_frame,
                               std::vector<zmq::message_t>* frames, bool* too_large) {
  frames->clear();
  *too_large = false;
  zmq::message_t frame;
  try {
    if (!router.recv(frame, first_frame)) return false;
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;  // the caller's loop comes back
    throw;
  }
  frames->reserve(4);  // routing id, header, tensors: one allocation
  bool more = frame.more();
  const bool reply = IsReplyRoute(frame);
  frames->push_back(std::move(frame));  // the routing id, from ZeroMQ
  size_t cost = 0;
  while (more && router.recv(frame, zmq::recv_flags::dontwait)) {
    more = frame.more();
    if (reply) {  // ours: neither counted nor limited
      frames->push_back(std::move(frame));
      continue;
    }
    bytes_in_ += frame.size();
    cost += FrameCost(frame.size());
    if (!*too_large && cost > options_.max_message_bytes) {
      *too_large = true;
      // Only the routing id and the header stay, for the refusal.
      frames->resize(std::min<size_t>(frames->size(), 2));
    }
    // A dropped frame is released by the next recv into `frame`.
    if (!*too_large || frames->size() < 2) frames->push_back(std::move(frame));
  }
  return true;
}

void RpcServer::OnRequest(zmq::socket_t& router, zmq::message_t routing_id,
                          std::string peer_address, std::vector<zmq::message_t> frames,
                          bool too_large, std::vector<Job>* inline_jobs) {
  if (frames.empty()) return;  // a routing id with nothing after it
  // A shared-memory ref in front is taken off here; the payload it names
  // is read in place.
  const size_t header_bytes = frames.size() > 1 ? frames[1].size() : 0;
  StatusOr<std::optional<ReceivedMessage>> in_place = std::optional<ReceivedMessage>();
  if (!too_large) {
    in_place =
        shm_peers_.Incoming(std::string(routing_id.data<char>(), routing_id.size()), peer_address,
                            &frames, cluster_id_.load(), options_.max_message_bytes);
  }
  // A reference to the header, not a copy, for the request id of a
  // refusal: it is read again only then.
  zmq::message_t header_frame;
  if (!frames.empty()) header_frame.copy(frames[0]);
  StatusOr<ReceivedMessage> request = [&]() -> StatusOr<ReceivedMessage> {
    if (too_large) return MessageTooLarge(options_.max_message_bytes);
    if (!in_place.ok()) return in_place.status();
    if (!*in_place) return DecodeMessage(std::move(frames), options_.max_message_bytes);
    bytes_in_ += (*in_place)->total_bytes() - header_bytes;  // the frames are counted
    return std::move(**in_place);
  }();
  Status status =
      request.ok() ? CheckClusterId(options_, cluster_id_.load(), *request) : request.status();
  if (!status.ok()) {
    VLOG(1) << options_.name << " refused a request: " << status.ToString();
    SendRefusal(router, std::move(routing_id), status,
                request.ok() ? request->request_id() : RequestIdOf(header_frame));
    return;
  }
  Job job{std::move(routing_id), std::move(request).value(), std::move(peer_address)};
  if (options_.serve_inline && options_.serve_inline(job.request)) {
    inline_jobs->push_back(std::move(job));
    ++inline_queued_;
    return;
  }
  {
    MutexLock lock(mu_);
    jobs_.push_back(std::move(job));
  }
  jobs_cv_.NotifyOne();
}

bool RpcServer::SendReply(zmq::socket_t& router, zmq::message_t& routing_id,
                          std::vector<zmq::message_t>& frames) {
  const std::string route(routing_id.data<char>(), routing_id.size());
  bytes_out_ += shm_peers_.Outgoing(route, &frames);
  // Counted before the send: a peer that has its reply may read the counter.
  bytes_out_ += FramesBytes(frames);
  if (shm_peers_.SendOverBell(route, frames)) return false;
  SendFrames(router, &routing_id, frames);
  return true;
}

bool RpcServer::Serve(Job& job, std::vector<zmq::message_t>* reply) {
  RequestContext context(std::string(job.routing_id.data<char>(), job.routing_id.size()),
                         job.request.request_id(), std::move(job.peer_address));
  OutgoingMessage message = handler_(job.request, context);
  if (context.deferred()) return false;  // SendDeferred counts its own
  Envelope envelope{job.request.request_id(), cluster_id_.load(), options_.role, options_.index};
  *reply = EncodeMessage(message, envelope);
  return true;
}

void RpcServer::IoLoop(zmq::socket_t& router, zmq::socket_t& monitor) {
  NameThisThread("rpc-io");
  SocketWaiter waiter({&router});
  // Set when much memory may have been freed; acted on once idle, so a
  // burst is followed by one trim, not one per event.
  bool trim_due = false;
  IoScratch scratch;
  auto next_monitor_look = SteadyClock().Now();
  for (;;) {
    const bool stopping = stopping_.load();
    if (stopping) {
      // Finish what was accepted, then leave.
      MutexLock lock(mu_);
      if (jobs_.empty() && jobs_in_flight_ == 0) break;
    }
    // The request bells of the clients on this host (ShmServerPeers); not
    // read while stopping, as new requests on the router.
    scratch.bells.clear();
    if (!stopping) shm_peers_.AddBellFds(&scratch.bells);
    bool idle = false;
    if (scratch.bells.empty()) {
      // Only the router to wait for: sleep inside its receive, one
      // message at a time, as a bare ZeroMQ server does. A poll of our own
      // would cost ZeroMQ another look at the router's mailbox.
      bool too_large = false;
      idle = !ReceiveMessage(router, zmq::recv_flags::none, &scratch.message, &too_large);
      if (!idle) {
        OnRouterMessage(router, &scratch.message, too_large, &scratch.inline_jobs, &trim_due);
      }
      // Used without the waiter: it must look before it sleeps next.
      waiter.Touched(kRouterSocket);
    } else {
      idle = !PollRouterAndBells(router, waiter, &scratch, &trim_due);
    }
    if (idle) {
      // Forget the shared-memory rings of clients that are gone.
      shm_peers_.DropGone();
      if (trim_due) GiveBackFreedMemory();
      trim_due = false;
    }
    // After the idle work: closed connections are still being torn down
    // when they are reported, so their memory is given back at the next
    // idle pass, not this one.
    const auto now = SteadyClock().Now();
    if (idle || now >= next_monitor_look) {
      next_monitor_look = now + kIdleWait;
      trim_due |= TakeDisconnections(monitor);
    }
  }
  router.close();
  monitor.close();
  MutexLock lock(stopped_mu_);
  stopped_ = true;
  stopped_cv_.NotifyAll();
}

bool RpcServer::PollRouterAndBells(zmq::socket_t& router, SocketWaiter& waiter, IoScratch* scratch,
                                   bool* trim_due) {
  static const std::vector<bool> kTheRouter = {true};
  const bool woken = waiter.Wait(kTheRouter, kIdleWait, &scratch->bells);
  if (waiter.TakeLook(kRouterSocket)) {
    bool too_large = false;
    while (ReceiveMessage(router, zmq::recv_flags::dontwait, &scratch->message, &too_large)) {
      OnRouterMessage(router, &scratch->message, too_large, &scratch->inline_jobs, trim_due);
    }
  }
  for (ShmServerPeers::BellRequest& request : shm_peers_.TakeBellRequests(scratch->bells)) {
    for (const zmq::message_t& frame : request.frames) bytes_in_ += frame.size();
    ++requests_through_bells_;
    OnRequest(router, zmq::message_t(request.routing_id.data(), request.routing_id.size()),
              std::move(request.peer_address), std::move(request.frames),
              /*too_large=*/false, &scratch->inline_jobs);
  }
  // The router was read until it had nothing, but replies went out on it
  // since: one look now, cheaper than a pass that polls first.
  if (ServeInline(router, &scratch->inline_jobs) && HasMessage(router)) {
    waiter.Touched(kRouterSocket);
  }
  return woken;
}

bool RpcServer::TakeDisconnections(zmq::socket_t& monitor) {
  bool closed = false;
  while (!RecvMultipart(monitor).empty()) closed = true;
  if (closed) shm_peers_.DropGone();
  return closed;
}

void RpcServer::OnRouterMessage(zmq::socket_t& router, std::vector<zmq::message_t>* message,
                                bool too_large, std::vector<Job>* inline_jobs, bool* trim_due) {
  if (message->size() < 2) return;  // a routing id with nothing after it
  if (IsReplyRoute((*message)[0])) {
    // A handler's reply: [its socket][the client's routing id][frames].
    if (message->size() < 3) return;
    zmq::message_t routing_id = std::move((*message)[1]);
    message->erase(message->begin(), message->begin() + 2);
    SendReply(router, routing_id, *message);
    MutexLock lock(mu_);
    --jobs_in_flight_;
    return;
  }
  if (stopping_.load()) return;  // new requests are not served
  *trim_due |= too_large;
  zmq::message_t routing_id = std::move((*message)[0]);
  message->erase(message->begin());
  std::string peer_address = PeerAddress((*message)[0]);
  OnRequest(router, std::move(routing_id), std::move(peer_address), std::move(*message), too_large,
            inline_jobs);
  // Served before the next read, which then also takes in what arrived
  // while the reply went out (a look the loop needs anyway).
  ServeInline(router, inline_jobs);
}

bool RpcServer::ServeInline(zmq::socket_t& router, std::vector<Job>* inline_jobs) {
  bool sent_on_router = false;
  for (Job& job : *inline_jobs) {
    --inline_queued_;
    std::vector<zmq::message_t> reply;
    if (Serve(job, &reply)) sent_on_router |= SendReply(router, job.routing_id, reply);
  }
  // Now: a request read from a ring holds its space there until dropped.
  inline_jobs->clear();
  return sent_on_router;
}

void RpcServer::HandlerLoop(int thread_index) {
  NameThisThread("rpc-handler");
  std::unique_ptr<zmq::socket_t> out = ConnectReplySocket(thread_index);
  for (;;) {
    Job job;
    {
      MutexLock lock(mu_);
      while (!handlers_exit_ && jobs_.empty()) jobs_cv_.Wait(mu_);
      if (jobs_.empty()) return;  // handlers_exit_
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++jobs_in_flight_;
    }
    std::vector<zmq::message_t> reply;
    if (Serve(job, &reply)) {
      SendFrames(*out, &job.routing_id, reply);
      continue;
    }
    // No reply on `out` for this job.
    MutexLock lock(mu_);
    --jobs_in_flight_;
  }
}

void RpcServer::SendDeferred(DeferredReply to, const OutgoingMessage& reply) {
  Envelope envelope{to.request_id, cluster_id_.load(), options_.role, options_.index};
  std::vector<zmq::message_t> frames = EncodeMessage(reply, envelope);
  {
    MutexLock lock(mu_);
    ++jobs_in_flight_;  // the I/O thread decrements it when forwarding
  }
  zmq::message_t routing_id(to.address.data(), to.address.size());
  MutexLock lock(deferred_mu_);
  SendFrames(*deferred_out_, &routing_id, frames);
}

std::unique_ptr<zmq::socket_t> RpcServer::ConnectReplySocket(int slot) {
  auto socket = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
  socket->set(zmq::sockopt::linger, 0);
  std::string route = reply_route_prefix_;
  route.push_back(static_cast<char>(slot & 0xff));
  route.push_back(static_cast<char>(slot >> 8 & 0xff));
  socket->set(zmq::sockopt::routing_id, zmq::buffer(route));
  socket->connect(inproc_endpoint_);
  return socket;
}

bool RpcServer::IsReplyRoute(const zmq::message_t& routing_id) const {
  return routing_id.size() == reply_route_prefix_.size() + 2 &&
         std::memcmp(routing_id.data(), reply_route_prefix_.data(), reply_route_prefix_.size()) ==
             0;
}

}  // namespace pst
