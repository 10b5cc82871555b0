#include "ps/step_notifier.h"

namespace pst {

StepNotifier::StepNotifier(Transport& transport, ChannelOptions chief)
    : channel_(transport.Connect(std::move(chief))) {}

void StepNotifier::Notify(int64_t step, uint64_t cluster_id) {
  std::lock_guard<std::mutex> lock(mu_);
  channel_->DiscardReplies();
  channel_->set_cluster_id(cluster_id);
  OutgoingMessage notice;
  notice.type = wire::MessageType::StepDoneRequest;
  notice.step = step;
  Status sent = channel_->Send(notice).status();
  if (!sent.ok())
    LOG(WARNING) << "cannot tell the chief about step " << step << ": " << sent.ToString();
}

}  // namespace pst
