#include "transport/server.h"

#include <algorithm>
#include <sstream>

namespace pst {
namespace {

std::string InprocEndpoint(const void* self) {
  std::ostringstream s;
  s << "inproc://replies-" << self;
  return s.str();
}

// Sends frames as one multipart message, the routing id first when given.
size_t SendFrames(zmq::socket_t& socket, zmq::message_t* routing_id,
                  std::vector<zmq::message_t>& frames) {
  size_t bytes = 0;
  if (routing_id) socket.send(*routing_id, zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i) {
    bytes += frames[i].size();
    socket.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore
                                                 : zmq::send_flags::none);
  }
  return bytes;
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
  const uint8_t* bytes = AlignedBytes(header_frame, &copy);
  flatbuffers::Verifier verifier(bytes, header_frame.size());
  if (header_frame.size() < sizeof(flatbuffers::uoffset_t) ||
      !wire::VerifyHeaderBuffer(verifier)) {
    return 0;
  }
  return wire::GetHeader(bytes)->request_id();
}

}  // namespace

DeferredReply RequestContext::Defer() {
  CHECK(!deferred_) << "a request can be deferred only once";
  deferred_ = true;
  return DeferredReply{std::move(*routing_id_), request_id_};
}

RpcServer::RpcServer(zmq::context_t& context, ServerOptions options,
                     Handler handler)
    : context_(context),
      options_(std::move(options)),
      handler_(std::move(handler)),
      inproc_endpoint_(InprocEndpoint(this)),
      cluster_id_(options_.cluster_id) {}

RpcServer::~RpcServer() {
  Stop();
  if (io_thread_.joinable()) io_thread_.join();
  deferred_out_.reset();
  authenticator_.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    handlers_exit_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& t : handler_threads_) t.join();
}

Status RpcServer::Start() {
  // Bind here, on the caller's thread, so a bad address fails Start(); the
  // sockets are then handed to the I/O thread, which alone uses them.
  auto router = std::make_shared<zmq::socket_t>(context_, zmq::socket_type::router);
  auto replies = std::make_shared<zmq::socket_t>(context_, zmq::socket_type::pull);
  try {
    if (options_.curve) {
      authenticator_ = std::make_unique<ZapAuthenticator>(context_, *options_.curve);
      MakeCurveServer(*router, *options_.curve);
    }
    router->set(zmq::sockopt::linger, 0);
    router->set(zmq::sockopt::maxmsgsize,
                static_cast<int64_t>(options_.max_message_bytes));
    router->set(zmq::sockopt::router_mandatory, 0);
    router->bind(options_.endpoint);
    replies->bind(inproc_endpoint_);
    bound_endpoint_ = router->get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return Unavailable(options_.name + " cannot bind " + options_.endpoint +
                       ": " + e.what());
  }
  deferred_out_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::push);
  deferred_out_->set(zmq::sockopt::linger, 0);
  deferred_out_->connect(inproc_endpoint_);
  for (int i = 0; i < std::max(1, options_.num_threads); ++i) {
    handler_threads_.emplace_back([this, i] { HandlerLoop(i); });
  }
  io_thread_ = std::thread([this, router, replies] { IoLoop(*router, *replies); });
  return Status::OK();
}

void RpcServer::Stop() { stopping_.store(true); }

void RpcServer::Wait() {
  std::unique_lock<std::mutex> lock(stopped_mu_);
  stopped_cv_.wait(lock, [this] { return stopped_; });
}

size_t RpcServer::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size();
}

Status RpcServer::CheckClusterId(const ReceivedMessage& request) const {
  const uint64_t mine = cluster_id_.load();
  const uint64_t theirs = request.header().cluster_id();
  if (mine == 0 || theirs == mine) return Status::OK();
  const auto& open = options_.open_types;
  if (theirs == 0 &&
      std::find(open.begin(), open.end(), request.type()) != open.end()) {
    return Status::OK();
  }
  return PermissionDenied(options_.name + " refuses a message from cluster " +
                          std::to_string(theirs) + ": this is cluster " +
                          std::to_string(mine));
}

void RpcServer::SendReply(zmq::socket_t& router, zmq::message_t routing_id,
                          const OutgoingMessage& reply, uint64_t request_id) {
  Envelope envelope{request_id, cluster_id_.load(), options_.role,
                    options_.index};
  std::vector<zmq::message_t> frames = EncodeMessage(reply, envelope);
  bytes_out_ += SendFrames(router, &routing_id, frames);
}

void RpcServer::OnRequest(zmq::socket_t& router,
                          std::vector<zmq::message_t> frames) {
  if (frames.size() < 2) return;  // a routing id with nothing after it
  zmq::message_t routing_id = std::move(frames[0]);
  frames.erase(frames.begin());
  size_t size = 0;
  for (const auto& f : frames) size += f.size();
  bytes_in_ += size;
  const uint64_t request_id = RequestIdOf(frames[0]);
  StatusOr<ReceivedMessage> request =
      DecodeMessage(std::move(frames), options_.max_message_bytes);
  Status status = request.ok() ? CheckClusterId(*request) : request.status();
  if (!status.ok()) {
    VLOG(1) << options_.name << " refused a request: " << status.ToString();
    OutgoingMessage error;
    error.type = wire::MessageType::ErrorReply;
    error.status = status;
    SendReply(router, std::move(routing_id), error, request_id);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(Job{std::move(routing_id), std::move(request).value()});
  }
  jobs_cv_.notify_one();
}

void RpcServer::IoLoop(zmq::socket_t& router, zmq::socket_t& replies) {
  zmq::pollitem_t items[] = {{router.handle(), 0, ZMQ_POLLIN, 0},
                             {replies.handle(), 0, ZMQ_POLLIN, 0}};
  for (;;) {
    zmq::poll(items, 2, std::chrono::milliseconds(50));
    if (items[1].revents & ZMQ_POLLIN) {
      for (;;) {
        std::vector<zmq::message_t> reply = RecvMultipart(replies);
        if (reply.empty()) break;
        zmq::message_t routing_id = std::move(reply[0]);
        reply.erase(reply.begin());
        bytes_out_ += SendFrames(router, &routing_id, reply);
        std::lock_guard<std::mutex> lock(mu_);
        --jobs_in_flight_;
      }
    }
    if (stopping_.load()) {
      // Finish what was accepted, then leave; new requests are not read.
      std::lock_guard<std::mutex> lock(mu_);
      if (jobs_.empty() && jobs_in_flight_ == 0) break;
      continue;
    }
    if (items[0].revents & ZMQ_POLLIN) {
      for (;;) {
        std::vector<zmq::message_t> request = RecvMultipart(router);
        if (request.empty()) break;
        OnRequest(router, std::move(request));
      }
    }
  }
  router.close();
  replies.close();
  std::lock_guard<std::mutex> lock(stopped_mu_);
  stopped_ = true;
  stopped_cv_.notify_all();
}

void RpcServer::HandlerLoop(int /*thread_index*/) {
  zmq::socket_t out(context_, zmq::socket_type::push);
  out.set(zmq::sockopt::linger, 0);
  out.connect(inproc_endpoint_);
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      jobs_cv_.wait(lock, [this] { return handlers_exit_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // handlers_exit_
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++jobs_in_flight_;
    }
    RequestContext context(&job.routing_id, job.request.request_id());
    OutgoingMessage reply = handler_(job.request, context);
    if (context.deferred()) {
      // No reply on `out` for this job; SendDeferred counts its own.
      std::lock_guard<std::mutex> lock(mu_);
      --jobs_in_flight_;
      continue;
    }
    Envelope envelope{job.request.request_id(), cluster_id_.load(),
                      options_.role, options_.index};
    std::vector<zmq::message_t> frames = EncodeMessage(reply, envelope);
    SendFrames(out, &job.routing_id, frames);
  }
}

void RpcServer::SendDeferred(DeferredReply to, const OutgoingMessage& reply) {
  Envelope envelope{to.request_id, cluster_id_.load(), options_.role, options_.index};
  std::vector<zmq::message_t> frames = EncodeMessage(reply, envelope);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++jobs_in_flight_;  // the I/O thread decrements it when forwarding
  }
  std::lock_guard<std::mutex> lock(deferred_mu_);
  SendFrames(*deferred_out_, &to.routing_id, frames);
}

}  // namespace pst
