// ShardKeeper: keeps the ps shards alive and consistent for the chief. At
// start it waits for every ps, then initializes the variables (seeded) and
// restores the newest valid checkpoint, or, a restarted chief, carries on
// from the shards still running when they agree (scheduler/start_decision.h;
// with --ps_replicas, in the chains the ps hold; not with --reset_container,
// which discards what the job's named container holds before initializing). While training runs it
// probes them; when one is lost (dead, or restarted without its variables) it brings the whole
// cluster back to one step: every shard initialized again, then the newest checkpoint restored. One
// that was only slow to answer is left as it is. At the end it shuts them down.
//
// Time: `clock` decides how long to wait for the ps (--ps_wait_timeout_ms);
// a request's own deadline is the transport's, read from SteadyClock(),
// which the transport waits by.
//
// With --ps_replicas > 1 (docs/REPLICATED_SHARDS.md) a lost ps costs no
// rollback: its probes go through a ReplicaKeeper, which promotes backups
// and puts returning tasks back into the chains; only a shard whose every
// replica is lost brings the whole cluster back to the newest checkpoint.
//
// With --lr_schedule=plateau it also brings the shards to one k (the
// learning rate's lowerings, chief/lr_plateau.h) whenever their variables
// start over or go on.
//
// Ownership: borrows the options, the ps client, the sync coordinator (null
// in async mode), the checkpointer (null without --checkpoint_dir), the stop
// flag (set by a signal), the clock and the plateau (null for another
// schedule); each must outlive the keeper.
// Thread safety: none; the chief's main thread.
#ifndef PST_CHIEF_SHARD_KEEPER_H_
#define PST_CHIEF_SHARD_KEEPER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chief/checkpoints/checkpointer.h"
#include "chief/chief_options.h"
#include "chief/lr_plateau.h"
#include "chief/replication/replica_keeper.h"
#include "chief/sync/sync_coordinator.h"
#include "common/clock.h"
#include "common/status.h"
#include "ps/ps_failure.h"
#include "ps/shard_admin.h"

namespace pst {

class ShardKeeper {
 public:
  // Between two probes while training runs.
  static constexpr std::chrono::milliseconds kProbeInterval{500};

  // `routes` (borrowed; used with --ps_replicas > 1) is where the chains
  // are published for the ps client and the workers.
  ShardKeeper(const ChiefOptions& options, ShardAdmin* ps, SyncCoordinator* sync,
              Checkpointer* checkpointer, const std::atomic<bool>& stop,
              const MonotonicClock& clock = SteadyClock(), LrPlateau* lr_plateau = nullptr,
              RoutesBoard* routes = nullptr);

  // Waits for every ps to answer, each within --ps_wait_timeout_ms
  // (DeadlineExceeded naming the missing one); Aborted as soon as the stop
  // flag is set, not at the deadline.
  Status WaitForShards();
  // Brings the shards to the state training opens in; returns its step:
  // the running shards' (async, a restarted chief), a restored checkpoint's,
  // or 0.
  StatusOr<int64_t> Start();
  // Pauses until every ps answers. When each still holds this cluster's
  // variables (it was slow, not lost), training goes on where it is;
  // otherwise every shard is initialized again and the newest checkpoint
  // restored (sync: the coordinator goes back to its step). Returns the
  // step training resumes at. `why`: what looked lost.
  StatusOr<int64_t> Recover(const std::string& why);

  // "" when every shard answers within a second with its variables; else
  // what is wrong (a dead ps, or one restarted empty). Sync: also passes on
  // each shard's step, as its notices do.
  std::string Probe();
  // Backups promoted to primary so far (--ps_replicas; 0 without).
  int64_t promotions() const { return replicas_ ? replicas_->chains().promotions() : 0; }
  // Every shard's status from the last probe that reached them all.
  const std::vector<ShardStatus>& probed() const { return probed_; }
  // Every shard's status now, each within --rpc_timeout_ms.
  StatusOr<std::vector<ShardStatus>> Statuses();
  // Sync: the coordinator's. Async: read from the shard holding it with the
  // probes' patience (Unavailable when it does not answer, or restarted
  // without its variables), so a ps that died is noticed within a second,
  // not after --rpc_timeout_ms.
  StatusOr<int64_t> GlobalStep();
  // Asks every ps to exit; `patience`: how long to wait for each answer
  // (short when interrupted: the ps may be stopping too). Failures are
  // logged.
  void Shutdown(std::chrono::milliseconds patience);

  // The seeded initial values of every variable, global step first.
  std::vector<Tensor> InitialValues() const;
  // A request's deadline: --rpc_timeout_ms from now.
  MonotonicClock::TimePoint deadline() const;

 private:
  // `reset_container`: discard what the named container holds first.
  Status InitializeVariables(bool reset_container = false);
  // Logs the containers each ps holds (a shared ps cluster).
  void LogContainers();
  // True when every ps answers with this cluster's variables initialized.
  StatusOr<bool> EveryShardKeptItsVariables();
  // The step of the running shards when every ps still serves this
  // cluster's variables and they agree (DecideStart; --ps_replicas: the
  // chains they hold are whole, FindRunningChains, and are adopted); none
  // otherwise.
  StatusOr<std::optional<int64_t>> CarryOnWithRunningShards();
  // Logs why the chief does not carry on from the running ps (see there).
  void LogWhyNotCarryingOn(const std::string& why);
  // --ps_replicas: the replicas each ps task reports (none when silent).
  std::vector<std::vector<ReplicaLoad>> TaskReplicas();
  // The restored checkpoint's step; 0 without one.
  StatusOr<int64_t> RestoreNewestCheckpoint();
  // The most lowerings any running shard applies (the plateau's k).
  StatusOr<int> RunningLrLowerings();
  // The status of shard `shard` (replicated: of its primary's replica).
  StatusOr<ShardStatus> ShardStatusOf(int shard, MonotonicClock::TimePoint deadline);
  // The shard holding the global step.
  int GlobalStepShard() const;
  // Replicated: the chains repaired after `why`; without a rollback unless
  // a shard lost every replica.
  StatusOr<int64_t> RecoverReplicated(const std::string& why);

  const ChiefOptions& options_;
  ShardAdmin* const ps_;
  SyncCoordinator* const sync_;
  Checkpointer* const checkpointer_;
  const std::atomic<bool>& stop_;
  const MonotonicClock& clock_;
  LrPlateau* const lr_plateau_;
  std::unique_ptr<ReplicaKeeper> replicas_;  // --ps_replicas > 1 only
  std::vector<ShardStatus> probed_;
};

// What a probe's answer from `shard` says is wrong; "" when nothing is.
std::string ShardTrouble(int shard, const StatusOr<ShardStatus>& status);

// The shards holding a trainable (float) variable: those that accumulate
// gradients in sync mode.
std::vector<int> SyncShards(const Placement& placement);

}  // namespace pst

#endif  // PST_CHIEF_SHARD_KEEPER_H_
