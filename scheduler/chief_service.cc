#include "scheduler/chief_service.h"

namespace pst {

OutgoingMessage ChiefService::StateReply(wire::MessageType type) const {
  OutgoingMessage reply;
  reply.type = type;
  const uint64_t hash = state_->placement_hash();
  const wire::ClusterState state = state_->state();
  const int64_t train_steps = state_->train_steps();
  reply.extras = [hash, state, train_steps](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, hash, state, train_steps);
    return extras;
  };
  return reply;
}

OutgoingMessage ChiefService::Handle(const ReceivedMessage& request) {
  const wire::Header& h = request.header();
  const bool is_join = request.type() == wire::MessageType::JoinRequest;
  const bool is_report = request.type() == wire::MessageType::ReportRequest;
  OutgoingMessage error;
  error.type = is_join ? wire::MessageType::JoinReply : wire::MessageType::ReportReply;
  if (!is_join && !is_report) {
    error.type = wire::MessageType::ErrorReply;
    error.status = InvalidArgument(std::string("the chief does not serve ") +
                                   wire::EnumNameMessageType(request.type()));
    return error;
  }
  if (h.sender_role() != wire::Role::Worker || h.sender_index() < 0 ||
      h.sender_index() >= num_workers_) {
    error.status = InvalidArgument("sender is not a worker of this cluster (role " +
                                   std::string(wire::EnumNameRole(h.sender_role())) +
                                   ", index " + std::to_string(h.sender_index()) + ")");
    return error;
  }
  if (is_join) {
    if (h.join() == nullptr || h.join()->placement_hash() != state_->placement_hash()) {
      error.status = FailedPrecondition(
          "worker:" + std::to_string(h.sender_index()) +
          " computed another variable placement than the chief: --model, "
          "--placement, --partition_bytes and --ps_hosts must be the same on every task");
      return error;
    }
    if (state_->state() != wire::ClusterState::Starting) {
      state_->RecordJoin(h.sender_index());
    }
    return StateReply(wire::MessageType::JoinReply);
  }
  if (h.report() == nullptr) {
    error.status = InvalidArgument("report request without a report");
    return error;
  }
  state_->RecordReport(h.sender_index(), *h.report());
  return StateReply(wire::MessageType::ReportReply);
}

}  // namespace pst
