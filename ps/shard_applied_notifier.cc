#include "ps/shard_applied_notifier.h"

namespace pst {

ShardAppliedNotifier::ShardAppliedNotifier(Transport& transport, ChannelOptions chief)
    : channel_(transport.Connect(std::move(chief))) {}

void ShardAppliedNotifier::ShardApplied(int64_t step, uint64_t cluster_id, int shard) {
  MutexLock lock(mu_);
  channel_->DiscardReplies();
  channel_->set_cluster_id(cluster_id);
  OutgoingMessage notice;
  notice.type = wire::MessageType::ShardAppliedRequest;
  notice.step = step;
  if (shard >= 0) {
    notice.extras = [shard](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.replica = wire::CreateReplicaRoute(fbb, shard, 0);
      return extras;
    };
  }
  Status sent = channel_->Send(notice).status();
  if (!sent.ok())
    LOG(WARNING) << "cannot tell the chief about step " << step << ": " << sent.ToString();
}

}  // namespace pst
