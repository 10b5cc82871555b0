// SyncCoordinator: the chief's half of synchronous training. It learns from
// the ps shards which step each has applied; when every shard that holds
// trainable variables has applied step s, the cluster moves to s+1 and the
// token queue releases the tokens of s+1. At --train_steps it releases none:
// the workers wait until the chief has its final checkpoint and Close()s.
//
// Each token carries the N (gradients aggregated) of its step: the fixed
// --replicas_to_aggregate, or with `auto` the N an AdaptiveReplicas picks as
// the step opens, from when the workers' gradients arrived in recent steps;
// every change of N is logged.
//
// Checkpoints need every shard at the same step: Pause() stops releasing
// tokens and waits until the step in flight is applied everywhere; Resume()
// releases the tokens held back.
//
// Thread safety: all methods are thread-safe.
#ifndef PST_CHIEF_SYNC_SYNC_COORDINATOR_H_
#define PST_CHIEF_SYNC_SYNC_COORDINATOR_H_

#include <chrono>
#include <optional>
#include <vector>

#include "chief/sync/adaptive_replicas.h"
#include "chief/sync/token_queue.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "transport/request_context.h"

namespace pst {

// The reply to a token request: the step to train and the gradients it
// aggregates, or step -1 (state Stopping): stop.
OutgoingMessage TokenReply(int64_t step, int replicas);

// How many gradients each sync step aggregates.
struct SyncReplicas {
  int fixed = 0;    // N, or 0: chosen per step (--replicas_to_aggregate=auto)
  int window = 20;  // auto: steps of arrival times that decide N
  const MonotonicClock* clock = &SteadyClock();  // auto: times the arrivals
};

class SyncCoordinator {
 public:
  // `sync_shards`: the shards that accumulate gradients (hold a trainable
  // variable). `replies` (borrowed) sends the parked token replies.
  SyncCoordinator(std::vector<int> sync_shards, int num_workers, int64_t train_steps,
                  ReplySender* replies, SyncReplicas replicas);

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
  int replicas() const;

 private:
  void Send(std::vector<TokenGrant> grants, int replicas);
  // Tokens of `step` go out now: fixes its N (auto: logs a change).
  void StepOpens(int64_t step) REQUIRES(mu_);
  // What Pause() waits for (see there).
  bool Settled() const REQUIRES(mu_);

  const int64_t train_steps_;
  ReplySender* replies_;
  TokenQueue tokens_;
  mutable Mutex mu_;
  CondVar applied_changed_;
  std::vector<int64_t> applied_ GUARDED_BY(mu_);  // per shard, steps applied (-1: not sync)
  int64_t global_step_ GUARDED_BY(mu_) = 0;
  bool paused_ GUARDED_BY(mu_) = false;
  bool closed_ GUARDED_BY(mu_) = false;  // by Close() until Open()
  const MonotonicClock& clock_;
  std::optional<AdaptiveReplicas> adaptive_ GUARDED_BY(mu_);  // auto only
  int replicas_ GUARDED_BY(mu_);                              // N of the step whose tokens are out
};

}  // namespace pst

#endif  // PST_CHIEF_SYNC_SYNC_COORDINATOR_H_
