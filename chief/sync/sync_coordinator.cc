#include "chief/sync/sync_coordinator.h"

#include <utility>

#include "transport/message_types.h"

namespace pst {

OutgoingMessage TokenReply(int64_t step, int quorum) {
  OutgoingMessage reply;
  reply.type = ReplyTypeOf(wire::MessageType::TokenRequest);
  reply.step = step;
  const wire::ClusterState state =
      step < 0 ? wire::ClusterState::Stopping : wire::ClusterState::Training;
  reply.extras = [state, quorum](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.join = wire::CreateJoinInfo(fbb, 0, state, 0, 0, quorum);
    return extras;
  };
  return reply;
}

SyncCoordinator::SyncCoordinator(std::vector<int> sync_shards, int num_workers, int64_t train_steps,
                                 ReplySender* replies, SyncQuorum quorum)
    : replies_(replies),
      steps_(std::move(sync_shards), num_workers, train_steps, quorum),
      parked_(num_workers) {}

std::vector<Answer> SyncCoordinator::Answers(const TokenRelease& release) {
  std::vector<Answer> answers;
  parked_.Take(release.workers, TokenReply(release.step, release.quorum), answers);
  return answers;
}

void SyncCoordinator::Open(int64_t step) {
  std::vector<Answer> answers;
  {
    MutexLock lock(mu_);
    answers = Answers(steps_.Open(step));
    applied_changed_.NotifyAll();
  }
  SendAnswers(replies_, std::move(answers));
}

OutgoingMessage SyncCoordinator::HandleTokenRequest(int worker, int64_t last_received,
                                                    RequestContext& context) {
  MutexLock lock(mu_);
  const TokenAnswer answer = steps_.Request(worker, last_received);
  if (answer.verdict == TokenAnswer::Verdict::kWait) parked_.Park(worker, context);
  // Parked: the return value is ignored. Stop: step -1.
  return TokenReply(answer.step, steps_.quorum());
}

void SyncCoordinator::ShardApplied(int shard, int64_t step) {
  std::vector<Answer> answers;
  {
    MutexLock lock(mu_);
    answers = Answers(steps_.ShardApplied(shard, step));
    applied_changed_.NotifyAll();
  }
  SendAnswers(replies_, std::move(answers));
}

StatusOr<int64_t> SyncCoordinator::Pause(MonotonicClock::TimePoint deadline) {
  MutexLock lock(mu_);
  steps_.Pause();
  bool notified = true;
  while (!steps_.Settled()) {
    if (!notified) {
      return DeadlineExceeded("the ps shards did not all finish sync step " +
                              std::to_string(steps_.global_step()) +
                              " before the checkpoint's deadline");
    }
    notified = applied_changed_.WaitUntil(mu_, deadline);
  }
  return steps_.global_step();
}

void SyncCoordinator::Resume() {
  std::vector<Answer> answers;
  {
    MutexLock lock(mu_);
    answers = Answers(steps_.Resume());
  }
  SendAnswers(replies_, std::move(answers));
}

void SyncCoordinator::Close() {
  std::vector<Answer> answers;
  {
    MutexLock lock(mu_);
    answers = Answers(steps_.Close());
    applied_changed_.NotifyAll();
  }
  SendAnswers(replies_, std::move(answers));
}

int64_t SyncCoordinator::global_step() const {
  MutexLock lock(mu_);
  return steps_.global_step();
}

int SyncCoordinator::quorum() const {
  MutexLock lock(mu_);
  return steps_.quorum();
}

}  // namespace pst
