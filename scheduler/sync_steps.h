// SyncSteps: the decisions of synchronous training (DESIGN section 7). It
// learns from the ps shards which step each has applied; when every shard
// that holds trainable variables has applied step s, the cluster moves to
// s+1 and the tokens of s+1 go out. At --train_steps none go out: the
// workers wait until the chief has its final checkpoint and closes.
//
// Each token carries its step's quorum N (the gradients the step
// aggregates; "replica" is kept for the copies of a shard): the fixed
// --replicas_to_aggregate, or with `auto` the N an AdaptiveQuorum picks as
// the step opens, from when the workers' gradients arrived in recent steps;
// every change of N is logged.
//
// Checkpoints need every shard at the same step: Pause() holds back the
// tokens of new steps until Resume(); Settled() says when the step in flight
// is applied everywhere.
//
// A plain object: requests and notices in, decisions (the workers to answer
// and with what) out; it holds no connection. Not thread-safe:
// SyncCoordinator serializes the calls, keeps the waiting workers' requests
// and sends the tokens.
#ifndef PST_SCHEDULER_SYNC_STEPS_H_
#define PST_SCHEDULER_SYNC_STEPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "scheduler/adaptive_quorum.h"
#include "scheduler/token_queue.h"

namespace pst {

// The quorum: how many gradients each sync step aggregates.
struct SyncQuorum {
  int fixed = 0;    // N, or 0: chosen per step (--replicas_to_aggregate=auto)
  int window = 20;  // auto: steps of arrival times that decide N
  const MonotonicClock* clock = &SteadyClock();  // auto: times the arrivals
};

// Tokens that go out now: each of `workers` gets `step` (-1: stop), whose
// quorum is `quorum`.
struct TokenRelease {
  std::vector<int> workers;
  int64_t step = -1;
  int quorum = 0;
};

class SyncSteps {
 public:
  // `sync_shards`: the shards that accumulate gradients (hold a trainable
  // variable).
  SyncSteps(std::vector<int> sync_shards, int num_workers, int64_t train_steps, SyncQuorum quorum);

  // Releases the tokens of `step` (0, or a restored checkpoint's step;
  // once the variables are initialized or restored). Called again after a
  // recovery, it moves the cluster back to `step`.
  TokenRelease Open(int64_t step);
  // A worker's token request: go (with quorum()), wait, or stop.
  // `last_received`: the step of the last token it received (TokenQueue).
  TokenAnswer Request(int worker, int64_t last_received);
  // A shard reports that it applied `step`: the tokens that go out.
  TokenRelease ShardApplied(int shard, int64_t step);
  // Holds back the tokens of new steps until Resume() or Open().
  void Pause();
  // Every sync shard has applied the same steps, the step in flight
  // included (once closed, the step in flight is abandoned).
  bool Settled() const;
  // Releases the tokens held back since Pause().
  TokenRelease Resume();
  // No more tokens: the waiting workers are to be told to stop.
  TokenRelease Close();

  // Steps every sync shard has applied.
  int64_t global_step() const { return global_step_; }
  // The N of the step whose tokens are out.
  int quorum() const { return quorum_; }

 private:
  // Tokens of `step` go out now: fixes its N (auto: logs a change).
  void StepOpens(int64_t step);

  const int64_t train_steps_;
  TokenQueue tokens_;
  std::vector<int64_t> applied_;  // per shard, steps applied (-1: not sync)
  int64_t global_step_ = 0;
  bool paused_ = false;
  bool closed_ = false;  // by Close() until Open()
  const MonotonicClock& clock_;
  std::optional<AdaptiveQuorum> adaptive_;  // auto only
  int quorum_;                              // N of the step whose tokens are out
};

}  // namespace pst

#endif  // PST_SCHEDULER_SYNC_STEPS_H_
