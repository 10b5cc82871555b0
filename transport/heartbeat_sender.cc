#include "transport/heartbeat_sender.h"

namespace pst {
namespace {

// A heartbeat must not wait longer than its interval to be sent.
ChannelOptions WithSendTimeout(ChannelOptions options, std::chrono::milliseconds interval) {
  options.rpc_timeout_ms = static_cast<int>(interval.count());
  return options;
}

}  // namespace

HeartbeatSender::HeartbeatSender(zmq::context_t& context, ChannelOptions chief,
                                 std::chrono::milliseconds interval,
                                 std::function<uint64_t()> cluster_id)
    : interval_(interval),
      cluster_id_(std::move(cluster_id)),
      channel_(context, WithSendTimeout(std::move(chief), interval)),
      thread_([this] { Loop(); }) {}

HeartbeatSender::~HeartbeatSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void HeartbeatSender::Loop() {
  OutgoingMessage heartbeat;
  heartbeat.type = wire::MessageType::HeartbeatRequest;
  bool failing = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    while (channel_.ReadOne().status().code() != Code::kUnavailable) {
    }
    channel_.set_cluster_id(cluster_id_());
    const Status sent = channel_.Send(heartbeat).status();
    if (!sent.ok() && !failing) {
      LOG(WARNING) << "heartbeats to the chief are not getting through: " << sent.ToString();
    } else if (sent.ok() && failing) {
      LOG(INFO) << "heartbeats reach the chief at " << channel_.endpoint() << " again";
    }
    failing = !sent.ok();
    lock.lock();
    wake_.wait_for(lock, interval_, [this] { return stop_; });
  }
}

}  // namespace pst
