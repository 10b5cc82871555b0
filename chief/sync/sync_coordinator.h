// SyncCoordinator: the chief's half of synchronous training that talks to
// the workers. The decisions are SyncSteps' (scheduler/sync_steps.h); this
// class serializes them, parks the token requests of the workers told to
// wait and sends their tokens when a decision releases them, and lets a
// checkpoint wait until every shard has applied the step in flight.
//
// Thread safety: all methods are thread-safe.
#ifndef PST_CHIEF_SYNC_SYNC_COORDINATOR_H_
#define PST_CHIEF_SYNC_SYNC_COORDINATOR_H_

#include <vector>

#include "chief/sync/parked_replies.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "scheduler/sync_steps.h"
#include "transport/request_context.h"

namespace pst {

// The reply to a token request: the step to train and the gradients it
// aggregates, or step -1 (state Stopping): stop.
OutgoingMessage TokenReply(int64_t step, int quorum);

class SyncCoordinator {
 public:
  // `sync_shards`: the shards that accumulate gradients (hold a trainable
  // variable). `replies` (borrowed) sends the parked token replies.
  SyncCoordinator(std::vector<int> sync_shards, int num_workers, int64_t train_steps,
                  ReplySender* replies, SyncQuorum quorum);

  // Releases the tokens of `step` (0, or a restored checkpoint's step;
  // call once the variables are initialized or restored). Called again
  // after a recovery, it moves the cluster back to `step`.
  void Open(int64_t step);
  // Answers a worker's token request now, or parks it. `last_received`:
  // the step of the last token the worker received (see TokenQueue).
  OutgoingMessage HandleTokenRequest(int worker, int64_t last_received, RequestContext& context);
  // A shard reports that it applied `step`.
  void ShardApplied(int shard, int64_t step);
  // Stops handing out tokens; parked workers are told to stop.
  void Close();
  // Holds back the tokens of new steps and waits until every sync shard has
  // applied the same steps, the step in flight included (after Close(), the
  // step in flight is abandoned); returns that count (the step to
  // checkpoint).
  // DeadlineExceeded when a shard lags past `deadline` (it stays paused:
  // Open() or Resume() ends the pause).
  StatusOr<int64_t> Pause(MonotonicClock::TimePoint deadline);
  // Releases the tokens held back since Pause().
  void Resume();

  // Steps every sync shard has applied.
  int64_t global_step() const;
  // The N of the step whose tokens are out.
  int quorum() const;

 private:
  // The answers to the parked requests that `release` lets go.
  std::vector<Answer> Answers(const TokenRelease& release) REQUIRES(mu_);

  ReplySender* replies_;
  mutable Mutex mu_;
  CondVar applied_changed_;
  SyncSteps steps_ GUARDED_BY(mu_);
  ParkedReplies parked_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_CHIEF_SYNC_SYNC_COORDINATOR_H_
