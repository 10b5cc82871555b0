#include "transport/in_process.h"

#include <glog/logging.h>

#include <deque>
#include <map>

#include "common/clock.h"
#include "common/mutex.h"
#include "transport/frames.h"

namespace pst {

using Frames = std::vector<zmq::message_t>;
class InProcessServer;

struct InProcessTransport::Network {
  std::string peer_address;
  Mutex mu;
  CondVar replied;
  std::map<std::string, InProcessServer*> servers GUARDED_BY(mu);     // by endpoint
  std::map<std::string, std::deque<Frames>*> inboxes GUARDED_BY(mu);  // by address
  uint64_t next_address GUARDED_BY(mu) = 1;

  // Queues a reply for the connection at `address`; lost when it is gone.
  void Deliver(const std::string& address, Frames frames) {
    MutexLock lock(mu);
    auto it = inboxes.find(address);
    if (it == inboxes.end()) return;
    it->second->push_back(std::move(frames));
    replied.NotifyAll();
  }
};

namespace {

using Network = InProcessTransport::Network;

size_t Bytes(const Frames& frames) {
  size_t bytes = 0;
  for (const zmq::message_t& f : frames) bytes += f.size();
  return bytes;
}

}  // namespace

class InProcessServer : public Server {
 public:
  InProcessServer(std::shared_ptr<Network> network, ServerOptions options, Handler handler)
      : network_(std::move(network)),
        options_(std::move(options)),
        handler_(std::move(handler)),
        cluster_id_(options_.cluster_id) {}
  ~InProcessServer() override {
    Stop();
    MutexLock lock(mu_);
    while (active_ != 0) idle_.Wait(mu_);
  }

  Status Start() override {
    MutexLock lock(network_->mu);
    if (!network_->servers.emplace(options_.endpoint, this).second) {
      return Unavailable("cannot bind " + options_.endpoint + ": address in use");
    }
    bound_endpoint_ = options_.endpoint;
    return Status::OK();
  }
  void Stop() override {
    {
      MutexLock lock(network_->mu);
      auto it = network_->servers.find(options_.endpoint);
      if (it != network_->servers.end() && it->second == this) network_->servers.erase(it);
    }
    MutexLock lock(mu_);
    stopped_ = true;
    idle_.NotifyAll();
  }
  void Wait() override {
    MutexLock lock(mu_);
    while (!stopped_) idle_.Wait(mu_);
  }
  bool WaitFor(std::chrono::milliseconds timeout) override {
    const auto deadline = SteadyClock().Now() + timeout;
    MutexLock lock(mu_);
    while (!stopped_ && idle_.WaitUntil(mu_, deadline)) {
    }
    return stopped_;
  }
  const std::string& bound_endpoint() const override { return bound_endpoint_; }
  uint64_t cluster_id() const override { return cluster_id_.load(); }
  void set_cluster_id(uint64_t id) override { cluster_id_.store(id); }
  uint64_t bytes_in() const override { return bytes_in_.load(); }
  uint64_t bytes_out() const override { return bytes_out_.load(); }
  size_t queue_depth() const override { return 0; }

  void SendDeferred(DeferredReply to, const OutgoingMessage& reply) override {
    Reply(to.address, reply,
          Envelope{to.request_id, cluster_id_.load(), options_.role, options_.index});
  }

  // Called by Network users with the server registered; see Post.
  void Begin() {
    MutexLock lock(mu_);
    ++active_;
  }
  // Verifies and serves one request from the connection at `address`.
  void Serve(const std::string& address, uint64_t request_id, Frames frames) {
    bytes_in_ += Bytes(frames);
    StatusOr<ReceivedMessage> request =
        DecodeMessage(std::move(frames), options_.max_message_bytes);
    Status status =
        request.ok() ? CheckClusterId(options_, cluster_id_.load(), *request) : request.status();
    if (!status.ok()) {
      OutgoingMessage refusal;  // cluster id 0: a stranger must not learn ours
      refusal.type = wire::MessageType::ErrorReply;
      refusal.status = status;
      Reply(address, refusal, Envelope{request_id, 0, options_.role, options_.index});
    } else {
      RequestContext context(address, request_id, network_->peer_address);
      OutgoingMessage reply = handler_(*request, context);
      if (!context.deferred()) {
        Reply(address, reply,
              Envelope{request_id, cluster_id_.load(), options_.role, options_.index});
      }
    }
    MutexLock lock(mu_);
    --active_;
    idle_.NotifyAll();
  }

 private:
  void Reply(const std::string& address, const OutgoingMessage& reply, const Envelope& envelope) {
    Frames frames = EncodeMessage(reply, envelope);
    bytes_out_ += Bytes(frames);
    network_->Deliver(address, std::move(frames));
  }

  const std::shared_ptr<Network> network_;
  const ServerOptions options_;
  const Handler handler_;
  std::string bound_endpoint_;  // set by Start()
  std::atomic<uint64_t> cluster_id_;
  std::atomic<uint64_t> bytes_in_{0};
  std::atomic<uint64_t> bytes_out_{0};
  Mutex mu_;
  CondVar idle_;
  int active_ GUARDED_BY(mu_) = 0;  // requests being served
  bool stopped_ GUARDED_BY(mu_) = false;
};

class InProcessConnection : public Connection {
 public:
  InProcessConnection(std::shared_ptr<Network> network, ChannelOptions options)
      : Connection(std::move(options)), network_(std::move(network)) {
    MutexLock lock(network_->mu);
    address_ = "in-process:" + std::to_string(network_->next_address++);
    network_->inboxes[address_] = &inbox_;
  }
  ~InProcessConnection() override {
    MutexLock lock(network_->mu);
    network_->inboxes.erase(address_);
  }

  StatusOr<ReceivedMessage> ReadOne() override {
    Frames frames;
    {
      MutexLock lock(network_->mu);
      if (inbox_.empty()) return Unavailable("no message ready from " + peer_name());
      frames = std::move(inbox_.front());
      inbox_.pop_front();
    }
    return DecodeMessage(std::move(frames), options().max_message_bytes);
  }

 protected:
  Status Post(const OutgoingMessage& request, const Envelope& envelope) override {
    Frames frames = EncodeMessage(request, envelope);
    InProcessServer* server = nullptr;
    {
      MutexLock lock(network_->mu);
      auto it = network_->servers.find(endpoint());
      if (it == network_->servers.end()) return Status::OK();  // lost, as on a socket
      server = it->second;
      server->Begin();  // the server's destructor waits for Serve to end
    }
    server->Serve(address_, envelope.request_id, std::move(frames));
    return Status::OK();
  }

  // Reads the inboxes of `connections` under this network's mutex, which
  // guards them all (CHECKed: one network), beyond what the analysis follows.
  void Poll(const std::vector<Connection*>& connections, const std::vector<bool>& wanted,
            std::chrono::milliseconds timeout,
            std::vector<bool>* ready_out) override NO_THREAD_SAFETY_ANALYSIS {
    std::vector<InProcessConnection*> mine;
    for (Connection* c : connections) {
      auto* connection = dynamic_cast<InProcessConnection*>(c);
      CHECK(connection != nullptr && connection->network_ == network_)
          << "a wait over connections of different transports";
      mine.push_back(connection);
    }
    std::vector<bool> ready(mine.size());
    const auto any_ready = [&]() NO_THREAD_SAFETY_ANALYSIS {
      bool any = false;
      for (size_t i = 0; i < mine.size(); ++i) {
        ready[i] = wanted[i] && !mine[i]->inbox_.empty();
        any |= ready[i];
      }
      return any;
    };
    const auto deadline = SteadyClock().Now() + timeout;
    MutexLock lock(network_->mu);
    while (!any_ready() && network_->replied.WaitUntil(network_->mu, deadline)) {
    }
    *ready_out = std::move(ready);
  }

 private:
  const std::shared_ptr<Network> network_;
  std::string address_;
  std::deque<Frames> inbox_ GUARDED_BY(network_->mu);
};

InProcessTransport::InProcessTransport(std::string peer_address)
    : network_(std::make_shared<Network>()) {
  network_->peer_address = std::move(peer_address);
}

InProcessTransport::~InProcessTransport() = default;

std::unique_ptr<Connection> InProcessTransport::Connect(ChannelOptions options) {
  return std::make_unique<InProcessConnection>(network_, std::move(options));
}

std::unique_ptr<Server> InProcessTransport::Listen(ServerOptions options, Server::Handler handler) {
  return std::make_unique<InProcessServer>(network_, std::move(options), std::move(handler));
}

}  // namespace pst
