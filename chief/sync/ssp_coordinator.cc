#include "chief/sync/ssp_coordinator.h"

#include <utility>

namespace pst {

OutgoingMessage ClockReply(int64_t clock) {
  OutgoingMessage reply;
  reply.type = wire::MessageType::ClockReply;
  reply.step = clock;
  const wire::ClusterState state =
      clock < 0 ? wire::ClusterState::Stopping : wire::ClusterState::Training;
  reply.extras = [state](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, 0, state);
    return extras;
  };
  return reply;
}

SspCoordinator::SspCoordinator(int num_workers, int64_t bound, int64_t train_steps,
                               ReplySender* replies, std::unique_ptr<std::ostream> log)
    : train_steps_(train_steps),
      replies_(replies),
      gate_(num_workers, bound),
      log_(std::move(log)) {
  // docs/FORMATS.md: a version line, the column names, a line per grant.
  if (log_) *log_ << "# ssp_clocks 1\nworker\tclock\tslowest\n" << std::flush;
}

void SspCoordinator::Log(int worker, int64_t clock, int64_t slowest) {
  if (log_) *log_ << worker << '\t' << clock << '\t' << slowest << '\n' << std::flush;
}

void SspCoordinator::Send(std::vector<ClockGrant> grants, bool stop) {
  for (ClockGrant& g : grants) {
    replies_->SendDeferred(std::move(g.to), ClockReply(stop ? -1 : g.clock));
  }
}

OutgoingMessage SspCoordinator::HandleClockRequest(int worker, int64_t completed,
                                                   const std::vector<bool>& gone,
                                                   RequestContext& context) {
  std::vector<ClockGrant> released;
  Admission admission;
  {
    MutexLock lock(mu_);
    for (int other = 0; other < static_cast<int>(gone.size()); ++other) {
      if (other == worker || !gone[other]) continue;
      for (ClockGrant& g : gate_.Leave(other)) released.push_back(std::move(g));
    }
    admission = gate_.Ask(worker, completed, context);
    for (ClockGrant& g : admission.released) released.push_back(std::move(g));
    for (const ClockGrant& g : released) Log(g.worker, g.clock, g.slowest);
    if (admission.verdict == Admission::Verdict::kGo) {
      Log(worker, admission.clock, admission.slowest);
    }
  }
  Send(std::move(released), /*stop=*/false);
  // Parked: the return value is ignored.
  return ClockReply(admission.verdict == Admission::Verdict::kStop ? -1 : admission.clock);
}

void SspCoordinator::WorkerLeft(int worker, int64_t global_step) {
  if (global_step >= train_steps_) return Close();
  std::vector<ClockGrant> released;
  {
    MutexLock lock(mu_);
    released = gate_.Leave(worker);
    for (const ClockGrant& g : released) Log(g.worker, g.clock, g.slowest);
  }
  Send(std::move(released), /*stop=*/false);
}

void SspCoordinator::Close() {
  std::vector<ClockGrant> stopped;
  {
    MutexLock lock(mu_);
    stopped = gate_.Close();
  }
  Send(std::move(stopped), /*stop=*/true);
}

}  // namespace pst
