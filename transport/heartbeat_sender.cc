#include "transport/heartbeat_sender.h"

namespace pst {
namespace {

// A heartbeat must not wait longer than its interval to be sent.
ChannelOptions WithSendTimeout(ChannelOptions options, std::chrono::milliseconds interval) {
  options.rpc_timeout_ms = static_cast<int>(interval.count());
  return options;
}

}  // namespace

HeartbeatSender::HeartbeatSender(Transport& transport, ChannelOptions chief,
                                 std::chrono::milliseconds interval,
                                 std::function<uint64_t()> cluster_id)
    : cluster_id_(std::move(cluster_id)),
      channel_(transport.Connect(WithSendTimeout(std::move(chief), interval))),
      thread_(interval, [this] { Send(); }) {}

void HeartbeatSender::Send() {
  channel_->DiscardReplies();
  channel_->set_cluster_id(cluster_id_());
  OutgoingMessage heartbeat;
  heartbeat.type = wire::MessageType::HeartbeatRequest;
  const Status sent = channel_->Send(heartbeat).status();
  if (!sent.ok() && !failing_) {
    LOG(WARNING) << "heartbeats to the chief are not getting through: " << sent.ToString();
  } else if (sent.ok() && failing_) {
    LOG(INFO) << "heartbeats reach the chief at " << channel_->endpoint() << " again";
  }
  failing_ = !sent.ok();
}

}  // namespace pst
