#include "transport/message_types.h"

namespace pst {

wire::MessageType ReplyTypeOf(wire::MessageType request) {
  using T = wire::MessageType;
  switch (request) {
    case T::PullRequest: return T::PullReply;
    case T::PushRequest: return T::PushReply;
    case T::InitRequest: return T::InitReply;
    case T::ShardStatusRequest: return T::ShardStatusReply;
    case T::ShutdownRequest: return T::ShutdownReply;
    case T::JoinRequest: return T::JoinReply;
    case T::ReportRequest: return T::ReportReply;
    case T::TokenRequest: return T::TokenReply;
    case T::ShardAppliedRequest: return T::ShardAppliedReply;
    case T::SaveRequest: return T::SaveReply;
    case T::RestoreRequest: return T::RestoreReply;
    case T::HeartbeatRequest: return T::HeartbeatReply;
    case T::ClockRequest: return T::ClockReply;
    case T::LrLoweringsRequest: return T::LrLoweringsReply;
    case T::ChainRequest: return T::ChainReply;
    case T::ShipRequest: return T::ShipReply;
    case T::RoutesRequest: return T::RoutesReply;
    case T::FileRequest: return T::FileReply;
    case T::StreamsRequest: return T::StreamsReply;
    case T::ExportCutRequest: return T::ExportCutReply;
    case T::TableRowsRequest: return T::TableRowsReply;
    default: return T::Invalid;
  }
}

}  // namespace pst
