#include "chief/chief_service.h"

#include <algorithm>

#include "ps/chain_wire.h"
#include "transport/message_types.h"

namespace pst {
namespace {

// A refusal; ChiefService::Handle gives it the request's reply type.
OutgoingMessage Error(Status status) {
  OutgoingMessage reply;
  reply.status = std::move(status);
  return reply;
}

std::string DescribeSender(const wire::Header& h) {
  return "role " + std::string(wire::EnumNameRole(h.sender_role())) + ", index " +
         std::to_string(h.sender_index());
}

}  // namespace

bool ChiefService::SentBy(const wire::Header& h, wire::Role role) const {
  const int tasks = role == wire::Role::Ps       ? num_ps_
                    : role == wire::Role::Worker ? num_workers_
                                                 : 0;
  return h.sender_role() == role && h.sender_index() >= 0 && h.sender_index() < tasks;
}

OutgoingMessage ChiefService::StateReply() const { return StateReply(state_->state()); }

OutgoingMessage ChiefService::StateReply(wire::ClusterState state) const {
  OutgoingMessage reply;
  const uint64_t hash = state_->placement_hash();
  const int64_t train_steps = state_->train_steps();
  reply.extras = [hash, state, train_steps](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, hash, state, train_steps);
    return extras;
  };
  return reply;
}

OutgoingMessage ChiefService::Handle(const ReceivedMessage& request, RequestContext& context) {
  OutgoingMessage reply = Dispatch(request, context);
  // A request the chief does not serve gets the generic ErrorReply.
  if (reply.type != wire::MessageType::ErrorReply) reply.type = ReplyTypeOf(request.type());
  return reply;
}

OutgoingMessage ChiefService::Dispatch(const ReceivedMessage& request, RequestContext& context) {
  switch (request.type()) {
    case wire::MessageType::JoinRequest:
    case wire::MessageType::ReportRequest:
    case wire::MessageType::TokenRequest:
    case wire::MessageType::FileRequest:
    case wire::MessageType::ClockRequest: return HandleWorker(request, context);
    case wire::MessageType::ShardAppliedRequest: return HandleShardApplied(request);
    case wire::MessageType::HeartbeatRequest: return HandleHeartbeat(request);
    case wire::MessageType::RoutesRequest: return HandleRoutes(request);
    default: {
      OutgoingMessage refusal = Error(InvalidArgument(std::string("the chief does not serve ") +
                                                      wire::EnumNameMessageType(request.type())));
      refusal.type = wire::MessageType::ErrorReply;
      return refusal;
    }
  }
}

OutgoingMessage ChiefService::HandleWorker(const ReceivedMessage& request,
                                           RequestContext& context) {
  const wire::Header& h = request.header();
  if (!SentBy(h, wire::Role::Worker)) {
    return Error(
        InvalidArgument("sender is not a worker of this cluster (" + DescribeSender(h) + ")"));
  }
  const int worker = h.sender_index();
  if (request.type() != wire::MessageType::JoinRequest) AdoptOnceOpen(worker);
  switch (request.type()) {
    case wire::MessageType::JoinRequest:
      if (h.join() != nullptr && h.join()->job() != nullptr &&
          h.join()->job()->string_view() != state_->job()) {
        return Error(FailedPrecondition("worker:" + std::to_string(worker) +
                                        " runs another job than the chief: the worker's is " +
                                        h.join()->job()->str() + ", the chief's " + state_->job() +
                                        "; --dataset, its files and --model must be the same on "
                                        "every task"));
      }
      if (h.join() == nullptr || h.join()->placement_hash() != state_->placement_hash()) {
        return Error(
            FailedPrecondition("worker:" + std::to_string(worker) +
                               " computed another variable placement than the chief: --model, "
                               "--placement, --partition_bytes and --ps_hosts must be the same on "
                               "every task"));
      }
      if (const int theirs = std::max(1, h.join()->ps_replicas()); theirs != ps_replicas_) {
        return Error(FailedPrecondition("worker:" + std::to_string(worker) +
                                        " has --ps_replicas=" + std::to_string(theirs) +
                                        ", the chief " + std::to_string(ps_replicas_) +
                                        ": --ps_replicas must be the same on every task"));
      }
      return StateReply(state_->RecordJoin(worker));
    case wire::MessageType::ReportRequest:
      if (h.report() == nullptr) {
        return Error(InvalidArgument("report request without a report"));
      }
      state_->RecordReport(worker, h.step(), *h.report());
      if (ssp_ != nullptr && h.report()->done()) ssp_->WorkerLeft(worker, h.step());
      return StateReply();
    case wire::MessageType::FileRequest: return HandleFileRequest(worker, h);
    case wire::MessageType::ClockRequest:
      if (ssp_ == nullptr) {
        return Error(FailedPrecondition("clocks exist only in --mode=ssp"));
      }
      // header.step: the steps the worker has completed.
      if (h.step() < 0) {
        return Error(
            InvalidArgument("clock request for " + std::to_string(h.step()) + " completed steps"));
      }
      state_->RecordSeen(worker);
      if (state_->state() == wire::ClusterState::Stopping) ssp_->Close();
      return ssp_->HandleClockRequest(worker, h.step(), state_->gone_worker_mask(), context);
    default:  // TokenRequest
      if (sync_ == nullptr) {
        return Error(FailedPrecondition("tokens exist only in --mode=sync"));
      }
      state_->RecordSeen(worker);
      // header.step: the step of the last token the worker received.
      return sync_->HandleTokenRequest(worker, h.step(), context);
  }
}

OutgoingMessage ChiefService::HandleFileRequest(int worker, const wire::Header& h) {
  if (files_ == nullptr) {
    return Error(FailedPrecondition("files are handed out only with --follow"));
  }
  state_->RecordSeen(worker);
  const wire::ClusterState state = state_->state();
  if (state != wire::ClusterState::Training) return StateReply(state);
  std::optional<StreamedFile> finished;
  if (const wire::FileReport* f = h.file(); f != nullptr && f->path() != nullptr) {
    finished = StreamedFile{f->path()->str(),
                            worker,
                            f->examples(),
                            f->positives(),
                            f->auc(),
                            f->log_loss(),
                            f->error() ? f->error()->str() : ""};
  }
  const std::string next = files_->Next(worker, finished, state_->gone_worker_mask());
  const uint64_t hash = state_->placement_hash();
  const int64_t train_steps = state_->train_steps();
  OutgoingMessage reply;
  reply.extras = [hash, state, train_steps, next](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, hash, state, train_steps);
    if (!next.empty()) extras.file = wire::CreateFileReportDirect(fbb, next.c_str());
    return extras;
  };
  return reply;
}

// Any sender of the cluster may ask (the transport checked its id): the
// routes say no more than where each shard is served.
OutgoingMessage ChiefService::HandleRoutes(const ReceivedMessage& request) {
  if (routes_ == nullptr) {
    return Error(FailedPrecondition("this cluster's shards are not replicated (--ps_replicas=1)"));
  }
  StatusOr<std::vector<ShardChain>> chains = routes_->FetchRoutes();
  if (!chains.ok()) return Error(chains.status());
  OutgoingMessage reply;
  reply.extras = [chains = *std::move(chains)](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.chains = ChainsToWire(fbb, chains);
    return extras;
  };
  return reply;
}

OutgoingMessage ChiefService::HandleShardApplied(const ReceivedMessage& request) {
  const wire::Header& h = request.header();
  if (!SentBy(h, wire::Role::Ps)) {
    return Error(InvalidArgument("step notice from a sender that is not a ps of this cluster"));
  }
  if (sync_ == nullptr) {
    return Error(FailedPrecondition("step notices exist only in --mode=sync"));
  }
  // A replicated shard's primary names the shard: it may be another task's.
  const int shard = h.replica() != nullptr ? h.replica()->shard() : h.sender_index();
  if (shard < 0 || shard >= num_ps_) {
    return Error(InvalidArgument("step notice for shard " + std::to_string(shard) +
                                 ", not one of this cluster's"));
  }
  sync_->ShardApplied(shard, h.step());
  OutgoingMessage reply;
  return reply;
}

// A worker that speaks without having joined joined this chief's previous
// run: the chief was restarted (with the cluster id of its checkpoint, which
// the server checked). Once training is open (also while it stops: the
// chief then waits for the worker to leave) it counts as live.
void ChiefService::AdoptOnceOpen(int worker) {
  if (state_->state() != wire::ClusterState::Starting && state_->Adopt(worker)) {
    LOG(INFO) << "worker:" << worker << " carries on from before this chief started";
  }
}

OutgoingMessage ChiefService::HandleHeartbeat(const ReceivedMessage& request) {
  const wire::Header& h = request.header();
  if (!SentBy(h, wire::Role::Ps) && !SentBy(h, wire::Role::Worker)) {
    return Error(InvalidArgument("heartbeat from a sender that is not a task of this cluster (" +
                                 DescribeSender(h) + ")"));
  }
  if (h.sender_role() == wire::Role::Worker) AdoptOnceOpen(h.sender_index());
  state_->RecordHeartbeat(h.sender_role(), h.sender_index());
  OutgoingMessage reply;
  return reply;
}

}  // namespace pst
