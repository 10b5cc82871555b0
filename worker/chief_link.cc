#include "worker/chief_link.h"

#include <thread>
#include <vector>

#include "common/clock.h"

namespace pst {
namespace {

// True when `reply` (to a token or clock request) says the cluster is stopping.
bool SaysStop(const ReceivedMessage& reply) {
  const wire::JoinInfo* join = reply.header().join();
  return reply.step() < 0 || (join && join->state() == wire::ClusterState::Stopping);
}

}  // namespace

ChiefLink::ChiefLink(Transport& transport, ChannelOptions options)
    : channel_(transport.Connect(std::move(options))) {}

StatusOr<JoinResult> ChiefLink::Join(uint64_t placement_hash, const std::string& job,
                                     MonotonicClock::TimePoint deadline,
                                     const std::atomic<bool>& stop, int ps_replicas) {
  OutgoingMessage request;
  request.type = wire::MessageType::JoinRequest;
  // 1 goes as absent: an unreplicated worker's join is as it was.
  const int replicas = ps_replicas > 1 ? ps_replicas : 0;
  request.extras = [placement_hash, job, replicas](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, placement_hash, wire::ClusterState::Starting, 0,
                                       fbb.CreateString(job), 0, replicas);
    return extras;
  };
  bool said_waiting = false;
  for (;;) {
    if (stop.load()) return Aborted("stopped by a signal while waiting to join");
    const auto attempt_deadline =
        std::min(deadline, SteadyClock().Now() + std::chrono::milliseconds(500));
    PST_ASSIGN_OR_RETURN(uint64_t id, channel_->Send(request));
    StatusOr<ReceivedMessage> reply = channel_->Receive(id, attempt_deadline);
    if (!reply.ok() && reply.status().code() != Code::kDeadlineExceeded) {
      return reply.status();  // e.g. a placement mismatch: retrying cannot help
    }
    if (reply.ok()) {
      const wire::JoinInfo* join = reply->header().join();
      if (join == nullptr) return Internal("chief sent a join reply without join info");
      if (join->state() != wire::ClusterState::Starting) {
        channel_->set_cluster_id(reply->header().cluster_id());
        return JoinResult{reply->header().cluster_id(), join->train_steps(),
                          join->state() == wire::ClusterState::Stopping};
      }
    }
    if (SteadyClock().Now() >= deadline) {
      return DeadlineExceeded("the chief at " + channel_->endpoint() +
                              " did not open training before --join_timeout_ms");
    }
    if (!said_waiting) {
      LOG(INFO) << "waiting for the chief at " << channel_->endpoint() << " to open training";
      said_waiting = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

StatusOr<ReceivedMessage> ChiefLink::AskRepeatedly(const OutgoingMessage& request,
                                                   MonotonicClock::TimePoint deadline,
                                                   const std::atomic<bool>& stop,
                                                   const std::string& what) {
  // A restarted chief may answer any request queued while it was down.
  std::vector<uint64_t> sent;
  for (;;) {
    if (stop.load()) return Aborted("stopped by a signal while waiting for the chief's " + what);
    PST_ASSIGN_OR_RETURN(uint64_t id, channel_->Send(request));
    sent.push_back(id);
    auto reply = channel_->ReceiveAny(
        sent, std::min(deadline, SteadyClock().Now() + std::chrono::seconds(1)));
    if (reply.ok() || reply.status().code() != Code::kDeadlineExceeded) return reply;
    if (SteadyClock().Now() >= deadline) {
      return DeadlineExceeded("the chief at " + channel_->endpoint() + " sent no " + what +
                              " within --join_timeout_ms");
    }
  }
}

StatusOr<std::optional<SyncToken>> ChiefLink::TakeToken(MonotonicClock::TimePoint deadline,
                                                        const std::atomic<bool>& stop) {
  OutgoingMessage request;
  request.type = wire::MessageType::TokenRequest;
  request.step = last_token_;
  PST_ASSIGN_OR_RETURN(ReceivedMessage reply, AskRepeatedly(request, deadline, stop, "token"));
  if (SaysStop(reply)) {
    stopping_ = true;
    return std::optional<SyncToken>();
  }
  last_token_ = reply.step();
  const wire::JoinInfo* join = reply.header().join();
  return std::optional<SyncToken>(
      SyncToken{last_token_, join != nullptr ? join->replicas_to_aggregate() : 0});
}

StatusOr<bool> ChiefLink::AwaitClock(int64_t completed, MonotonicClock::TimePoint deadline,
                                     const std::atomic<bool>& stop) {
  OutgoingMessage request;
  request.type = wire::MessageType::ClockRequest;
  request.step = completed;
  PST_ASSIGN_OR_RETURN(ReceivedMessage reply,
                       AskRepeatedly(request, deadline, stop, "leave to start a step"));
  if (SaysStop(reply)) stopping_ = true;
  return !stopping_;
}

StatusOr<std::optional<std::string>> ChiefLink::NextFile(const FileResult& finished,
                                                         MonotonicClock::TimePoint deadline,
                                                         const std::atomic<bool>& stop) {
  OutgoingMessage request;
  request.type = wire::MessageType::FileRequest;
  if (!finished.path.empty()) {
    request.extras = [finished](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.file = wire::CreateFileReportDirect(
          fbb, finished.path.c_str(), finished.examples, finished.auc, finished.log_loss,
          finished.positives, finished.error.empty() ? nullptr : finished.error.c_str());
      return extras;
    };
  }
  PST_ASSIGN_OR_RETURN(ReceivedMessage reply,
                       AskRepeatedly(request, deadline, stop, "next file to train"));
  if (SaysStop(reply)) {
    stopping_ = true;
    return std::optional<std::string>();
  }
  const wire::FileReport* next = reply.header().file();
  if (next == nullptr || next->path() == nullptr) return std::optional<std::string>("");
  return std::optional<std::string>(next->path()->str());
}

OutgoingMessage ChiefLink::ReportMessage(const TrainingReport& r) const {
  OutgoingMessage m;
  m.type = wire::MessageType::ReportRequest;
  m.step = r.step;
  m.extras = [r](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.report = wire::CreateReport(fbb, r.loss, r.examples, r.epoch, r.batch,
                                       r.batches_per_epoch, r.step_time_ms, r.done);
    return extras;
  };
  return m;
}

void ChiefLink::DrainReplies() {
  for (;;) {
    StatusOr<ReceivedMessage> reply = channel_->ReadOne();
    if (!reply.ok()) {
      if (reply.status().code() == Code::kUnavailable) return;  // nothing more
      continue;
    }
    const wire::JoinInfo* join = reply->header().join();
    if (join && join->state() == wire::ClusterState::Stopping) stopping_ = true;
  }
}

Status ChiefLink::Report(const TrainingReport& report) {
  DrainReplies();
  return channel_->Send(ReportMessage(report)).status();
}

Status ChiefLink::Leave(const TrainingReport& report) {
  TrainingReport last = report;
  last.done = true;
  // A courtesy: a chief that is gone (it stopped first, or was killed)
  // must not hold the worker for a whole --rpc_timeout_ms.
  PST_ASSIGN_OR_RETURN(uint64_t id, channel_->Send(ReportMessage(last)));
  Status said = channel_->Receive(id, SteadyClock().Now() + std::chrono::seconds(2)).status();
  if (!said.ok()) LOG(WARNING) << "the chief did not acknowledge the goodbye: " << said.ToString();
  return Status::OK();
}

bool ChiefLink::stopping() {
  DrainReplies();
  return stopping_;
}

}  // namespace pst
