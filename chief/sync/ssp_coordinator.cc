#include "chief/sync/ssp_coordinator.h"

#include <utility>

#include "transport/message_types.h"

namespace pst {

OutgoingMessage ClockReply(int64_t clock) {
  OutgoingMessage reply;
  reply.type = ReplyTypeOf(wire::MessageType::ClockRequest);
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
      parked_(num_workers),
      log_(std::move(log)) {
  // docs/FORMATS.md: a version line, the column names, a line per grant.
  if (log_) *log_ << "# ssp_clocks 1\nworker\tclock\tslowest\n" << std::flush;
}

void SspCoordinator::Log(int worker, int64_t clock, int64_t slowest) {
  if (log_) *log_ << worker << '\t' << clock << '\t' << slowest << '\n' << std::flush;
}

std::vector<Answer> SspCoordinator::Answers(const std::vector<ClockGrant>& grants, bool stop) {
  std::vector<Answer> answers;
  for (const ClockGrant& g : grants) {
    parked_.Take({g.worker}, ClockReply(stop ? -1 : g.clock), answers);
  }
  return answers;
}

OutgoingMessage SspCoordinator::HandleClockRequest(int worker, int64_t completed,
                                                   const std::vector<bool>& gone,
                                                   RequestContext& context) {
  std::vector<Answer> answers;
  Admission admission;
  {
    MutexLock lock(mu_);
    std::vector<ClockGrant> released;
    for (int other = 0; other < static_cast<int>(gone.size()); ++other) {
      if (other == worker || !gone[other]) continue;
      for (const ClockGrant& g : gate_.Leave(other)) released.push_back(g);
    }
    admission = gate_.Ask(worker, completed);
    if (admission.verdict == Admission::Verdict::kWait) parked_.Park(worker, context);
    for (const ClockGrant& g : admission.released) released.push_back(g);
    for (const ClockGrant& g : released) Log(g.worker, g.clock, g.slowest);
    if (admission.verdict == Admission::Verdict::kGo) {
      Log(worker, admission.clock, admission.slowest);
    }
    answers = Answers(released, /*stop=*/false);
  }
  SendAnswers(replies_, std::move(answers));
  // Parked: the return value is ignored.
  return ClockReply(admission.verdict == Admission::Verdict::kStop ? -1 : admission.clock);
}

void SspCoordinator::WorkerLeft(int worker, int64_t global_step) {
  if (global_step >= train_steps_) return Close();
  std::vector<Answer> answers;
  {
    MutexLock lock(mu_);
    const std::vector<ClockGrant> released = gate_.Leave(worker);
    for (const ClockGrant& g : released) Log(g.worker, g.clock, g.slowest);
    answers = Answers(released, /*stop=*/false);
  }
  SendAnswers(replies_, std::move(answers));
}

void SspCoordinator::Close() {
  std::vector<Answer> answers;
  {
    MutexLock lock(mu_);
    answers = Answers(gate_.Close(), /*stop=*/true);
  }
  SendAnswers(replies_, std::move(answers));
}

}  // namespace pst
