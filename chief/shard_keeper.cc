#include "chief/shard_keeper.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "chief/replication/running_chains.h"
#include "common/clock.h"
#include "model/layers/initializer.h"
#include "scheduler/start_decision.h"

namespace pst {
namespace {

// How long a probe waits for each shard's answer.
constexpr std::chrono::milliseconds kProbePatience{1000};
// How long WaitForShards waits for one answer before asking again.
constexpr std::chrono::milliseconds kWaitAttempt{250};
// A starting chief asks the shards this many times, this far apart, before
// it takes their disagreement for good.
constexpr int kAgreementAttempts = 20;
constexpr std::chrono::milliseconds kAgreementWait{100};

// The transport's deadline `patience` from now.
MonotonicClock::TimePoint RequestDeadline(std::chrono::milliseconds patience) {
  return SteadyClock().Now() + patience;
}

}  // namespace

ShardKeeper::ShardKeeper(const ChiefOptions& options, ShardAdmin* ps, SyncCoordinator* sync,
                         Checkpointer* checkpointer, const std::atomic<bool>& stop,
                         const MonotonicClock& clock, LrPlateau* lr_plateau, RoutesBoard* routes)
    : options_(options),
      ps_(ps),
      sync_(sync),
      checkpointer_(checkpointer),
      stop_(stop),
      clock_(clock),
      lr_plateau_(lr_plateau) {
  if (options_.ps_replicas > 1) {
    replicas_ = std::make_unique<ReplicaKeeper>(
        ps_->num_shards(), options_.ps_replicas, ps_, routes, [this](int task) {
          return ps_->InitializeTask(task, options_.shard, InitialValues(), options_.tables);
        });
  }
}

Status ShardKeeper::WaitForShards() {
  const int timeout_ms = options_.ps_wait_timeout_ms;
  const ClusterSpec& cluster = options_.cluster;
  const auto give_up = clock_.Now() + std::chrono::milliseconds(timeout_ms);
  for (int k = 0; k < ps_->num_shards(); ++k) {
    for (;;) {
      if (stop_.load())
        return Aborted("interrupted by a signal while waiting for ps:" + std::to_string(k));
      auto status = ps_->GetShardStatus(k, RequestDeadline(kWaitAttempt));
      if (status.ok()) break;
      if (status.status().code() != Code::kDeadlineExceeded) return status.status();
      if (clock_.Now() >= give_up) {
        return DeadlineExceeded(
            "ps:" + std::to_string(k) + " (" + cluster.ps[k].ToString() +
            ") did not answer within --ps_wait_timeout_ms=" + std::to_string(timeout_ms));
      }
      LOG(INFO) << "waiting for ps:" << k << " at " << cluster.ps[k].ToString();
    }
  }
  return Status::OK();
}

StatusOr<int64_t> ShardKeeper::Start() {
  if (replicas_) {
    // A restarted chief takes the chains the running ps hold over, when
    // they are whole and agree; otherwise every replica starts from the
    // initial values or the checkpoint.
    if (!options_.reset_container) {
      PST_ASSIGN_OR_RETURN(const std::optional<int64_t> carried_on, CarryOnWithRunningShards());
      if (carried_on) return *carried_on;
    }
    PST_RETURN_IF_ERROR(InitializeVariables());
    PST_RETURN_IF_ERROR(replicas_->SendAll(std::chrono::milliseconds(options_.rpc_timeout_ms)));
    return RestoreNewestCheckpoint();
  }
  // --reset_container: what the container holds goes, whoever's it is.
  if (!options_.reset_container) {
    PST_ASSIGN_OR_RETURN(const std::optional<int64_t> carried_on, CarryOnWithRunningShards());
    if (carried_on) return *carried_on;
  }
  PST_RETURN_IF_ERROR(InitializeVariables(options_.reset_container));
  if (!options_.container.empty()) LogContainers();
  return RestoreNewestCheckpoint();
}

void ShardKeeper::LogContainers() {
  for (int k = 0; k < ps_->num_shards(); ++k) {
    StatusOr<ShardStatus> status = ps_->GetShardStatus(k, deadline());
    if (!status.ok()) continue;  // the probes report it
    std::string held;
    for (const ContainerLoad& c : status->containers) {
      held += (held.empty() ? "" : ", ") + (c.name.empty() ? std::string("(default)") : c.name) +
              " (" + std::to_string(c.variables) + " variables, " + std::to_string(c.bytes_held) +
              " B, " + std::to_string(c.updates_applied) + " updates)";
    }
    LOG(INFO) << "ps:" << k << " holds " << status->containers.size() << " containers: " << held;
  }
}

// Every shard goes back to the same step, so the model stays consistent.
StatusOr<int64_t> ShardKeeper::RecoverReplicated(const std::string& why) {
  LOG(WARNING) << "a ps looks lost: " << why;
  const auto give_up = clock_.Now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
  for (;;) {
    PST_ASSIGN_OR_RETURN(const std::vector<int> lost, replicas_->Repair(kProbePatience));
    if (!lost.empty()) break;
    StatusOr<int64_t> step = sync_ ? StatusOr<int64_t>(sync_->global_step()) : GlobalStep();
    if (step.ok()) {
      LOG(WARNING) << "no update lost (--ps_replicas=" << options_.ps_replicas
                   << "): training goes on at global step " << *step;
      if (lr_plateau_) PST_RETURN_IF_ERROR(lr_plateau_->Resend(deadline()));
      return step;
    }
    if (clock_.Now() >= give_up || stop_.load()) return step.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  LOG(WARNING) << "a shard lost every replica: the whole cluster goes back to the newest "
                  "checkpoint";
  PST_RETURN_IF_ERROR(WaitForShards());
  replicas_->ResetAll();
  PST_RETURN_IF_ERROR(InitializeVariables());
  PST_RETURN_IF_ERROR(replicas_->SendAll(std::chrono::milliseconds(options_.rpc_timeout_ms)));
  PST_ASSIGN_OR_RETURN(const int64_t step, RestoreNewestCheckpoint());
  if (sync_) sync_->Open(step);
  LOG(WARNING) << "training resumes at global step " << step;
  return step;
}

StatusOr<int64_t> ShardKeeper::Recover(const std::string& why) {
  if (replicas_) return RecoverReplicated(why);
  LOG(WARNING) << "pausing training: " << why;
  PST_RETURN_IF_ERROR(WaitForShards());
  // A ps that was only slow (a stall longer than a probe's patience) still
  // holds everything: initializing it again would throw the training away.
  PST_ASSIGN_OR_RETURN(const bool kept, EveryShardKeptItsVariables());
  if (kept) {
    PST_ASSIGN_OR_RETURN(const int64_t step,
                         sync_ ? StatusOr<int64_t>(sync_->global_step()) : ps_->GlobalStep());
    LOG(WARNING) << "every ps answers again with its variables, nothing was lost: training "
                    "goes on at global step "
                 << step;
    if (lr_plateau_) PST_RETURN_IF_ERROR(lr_plateau_->Resend(deadline()));
    return step;
  }
  PST_RETURN_IF_ERROR(InitializeVariables());
  PST_ASSIGN_OR_RETURN(const int64_t step, RestoreNewestCheckpoint());
  if (sync_) sync_->Open(step);
  LOG(WARNING) << "training resumes at global step " << step;
  return step;
}

std::string ShardKeeper::Probe() {
  if (replicas_) {
    StatusOr<std::vector<int>> lost = replicas_->Repair(kProbePatience);
    if (!lost.ok()) return lost.status().ToString();
    if (!lost->empty()) {
      return "every replica of shard " + std::to_string(lost->front()) + " is lost";
    }
  }
  std::vector<ShardStatus> probed;
  for (int k = 0; k < ps_->num_shards(); ++k) {
    auto status = ShardStatusOf(k, RequestDeadline(kProbePatience));
    // Replicated: a primary lost since the repair is the next probe's.
    if (replicas_ && !status.ok()) return "";
    if (std::string trouble = ShardTrouble(k, status); !trouble.empty()) return trouble;
    probed.push_back(*status);
    // Sync: step notices are fire-and-forget; one lost (e.g. while the
    // chief restarted) would stall the step for good. The probe repairs it.
    if (sync_ && status->store.sync_step > 0) sync_->ShardApplied(k, status->store.sync_step - 1);
  }
  probed_ = std::move(probed);
  return "";
}

StatusOr<std::vector<ShardStatus>> ShardKeeper::Statuses() {
  std::vector<ShardStatus> shards;
  for (int k = 0; k < ps_->num_shards(); ++k) {
    PST_ASSIGN_OR_RETURN(ShardStatus s, ShardStatusOf(k, deadline()));
    shards.push_back(std::move(s));
  }
  return shards;
}

int ShardKeeper::GlobalStepShard() const {
  int shard = 0;
  for (const Slice& slice : ps_->placement().slices()) {
    if (slice.name == kGlobalStepName) shard = slice.shard;
  }
  return shard;
}

StatusOr<ShardStatus> ShardKeeper::ShardStatusOf(int shard, MonotonicClock::TimePoint deadline) {
  if (!replicas_) return ps_->GetShardStatus(shard, deadline);
  return ps_->GetShardStatus(replicas_->PrimaryOf(shard), deadline, shard);
}

StatusOr<int64_t> ShardKeeper::GlobalStep() {
  if (sync_) return sync_->global_step();
  const int shard = GlobalStepShard();
  auto status = ShardStatusOf(shard, RequestDeadline(kProbePatience));
  // A shard restarted empty has no step of the run: recover now, before the
  // next probe, rather than follow its step.
  if (std::string trouble = ShardTrouble(shard, status); !trouble.empty()) {
    return Unavailable(trouble);
  }
  return status->store.global_step;
}

void ShardKeeper::Shutdown(std::chrono::milliseconds patience) {
  for (int k = 0; k < ps_->num_shards(); ++k) {
    Status s = ps_->Shutdown(k, RequestDeadline(patience));
    if (!s.ok()) LOG(WARNING) << "shutting down ps:" << k << ": " << s.ToString();
  }
}

std::vector<Tensor> ShardKeeper::InitialValues() const {
  std::vector<Tensor> values;
  for (const VariableSpec& spec : ps_->placement().variables()) {
    values.push_back(InitializeVariable(spec, options_.seed));
  }
  return values;
}

MonotonicClock::TimePoint ShardKeeper::deadline() const {
  return RequestDeadline(std::chrono::milliseconds(options_.rpc_timeout_ms));
}

Status ShardKeeper::InitializeVariables(bool reset_container) {
  std::vector<Tensor> values = InitialValues();
  PST_RETURN_IF_ERROR(ps_->Initialize(options_.shard, values,
                                      ContainerInit{options_.cluster.chief.port, reset_container},
                                      options_.tables));
  LOG(INFO) << "optimizer " << options_.shard.optimizer.name << ", learning rate "
            << options_.shard.optimizer.learning_rate;
  LOG(INFO) << "initialized " << values.size() << " variables (seed " << options_.seed << ")"
            << (options_.container.empty() ? ""
                                           : " in container '" + options_.container + "'" +
                                                 (reset_container ? ", reset" : ""))
            << ", placement:\n"
            << ps_->placement().Describe();
  return Status::OK();
}

// `why` is empty when no ps holds anything of this cluster: a first start,
// or every ps restarted since the chief before this one.
void ShardKeeper::LogWhyNotCarryingOn(const std::string& why) {
  if (why.empty()) {
    LOG(INFO) << "no ps holds this cluster's variables (a first start, or every ps restarted): "
                 "initializing them, then restoring the newest checkpoint if there is one";
  } else {
    LOG(WARNING) << "not carrying on from the ps: " << why;
  }
}

// A restarted chief: when every ps still holds this cluster's run and the
// shards agree (scheduler/start_decision.h), that state is newer than any
// checkpoint (async workers trained on; a sync step ended after the last
// checkpoint) and the chief carries on from it.
StatusOr<std::optional<int64_t>> ShardKeeper::CarryOnWithRunningShards() {
  if (replicas_) {
    const RunningChains running = FindRunningChains(TaskReplicas(), ps_->num_shards());
    if (running.chains.empty()) {
      LogWhyNotCarryingOn(running.why);
      return std::optional<int64_t>();
    }
    // Before the shards' states are compared: a backup promoted now gets the
    // pushes its lost primary never acknowledged once the workers see it.
    replicas_->Adopt(running, std::chrono::milliseconds(options_.rpc_timeout_ms));
  }
  StartDecision decision;
  // Sync: a push on its way when the chief was lost (or sent again to a
  // promoted backup) may leave a shard a step behind the others for a moment.
  for (int attempt = 0; attempt < kAgreementAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kAgreementWait);
    std::vector<ShardAtStart> shards;
    for (int k = 0; k < ps_->num_shards(); ++k) {
      StatusOr<ShardStatus> status = ShardStatusOf(k, deadline());
      shards.push_back(status.ok()
                           ? ShardAtStart{true, status->store.initialized, status->store.sync_step,
                                          status->store.global_step}
                           : ShardAtStart{false, false, 0, 0});
    }
    decision =
        DecideStart(sync_ != nullptr, shards, SyncShards(ps_->placement()), GlobalStepShard());
    if (decision.carry_on || decision.why.empty()) break;
  }
  if (!decision.carry_on) {
    LogWhyNotCarryingOn(decision.why);
    // The restore starts from the home chains, above every epoch adopted.
    if (replicas_) replicas_->ResetAll();
    return std::optional<int64_t>();
  }
  if (replicas_) {
    // Learns which backups are filled, and puts back a task the chief
    // before this one had taken out of the chains.
    PST_RETURN_IF_ERROR(replicas_->Repair(kProbePatience).status());
  }
  LOG(INFO) << "every ps still serves this cluster's variables"
            << (sync_ ? ", every shard at sync step " + std::to_string(decision.step) : "")
            << ": carrying on from global step " << decision.step
            << " without restoring a checkpoint";
  if (lr_plateau_) {
    // The running shards' k, not the newest manifest's: like their
    // variables, it may be newer than any checkpoint (a lowering after the
    // last one). The most any shard has: the chief before this one decided
    // it, and may have been lost while telling the others.
    PST_ASSIGN_OR_RETURN(const int lowerings, RunningLrLowerings());
    PST_RETURN_IF_ERROR(lr_plateau_->Restart(lowerings, deadline()));
  }
  return std::optional<int64_t>(decision.step);
}

std::vector<std::vector<ReplicaLoad>> ShardKeeper::TaskReplicas() {
  std::vector<std::vector<ReplicaLoad>> by_task;
  for (int t = 0; t < ps_->num_shards(); ++t) {
    StatusOr<ShardStatus> status = ps_->GetShardStatus(t, deadline());
    by_task.push_back(status.ok() ? status->replicas : std::vector<ReplicaLoad>());
  }
  return by_task;
}

StatusOr<bool> ShardKeeper::EveryShardKeptItsVariables() {
  for (int k = 0; k < ps_->num_shards(); ++k) {
    auto status = ps_->GetShardStatus(k, deadline());
    // Refused: the ps serves another cluster, which the next steps report.
    if (!status.ok() || !status->store.initialized) return false;
  }
  return true;
}

// Overwrites the fresh variables with the newest valid checkpoint, if any.
// A plateau's k goes to the ps before the parts: no update after the
// restore runs at the fresh variables' k of 0.
StatusOr<int64_t> ShardKeeper::RestoreNewestCheckpoint() {
  std::optional<FoundCheckpoint> found;
  if (checkpointer_) {
    PST_ASSIGN_OR_RETURN(found, checkpointer_->FindNewest());
    if (!found) LOG(INFO) << "no checkpoint in " << options_.checkpoint_dir << ": starting fresh";
  }
  if (lr_plateau_) {
    PST_RETURN_IF_ERROR(lr_plateau_->Restart(found ? found->manifest.lr_lowerings : 0, deadline()));
  }
  if (!found) return int64_t{0};
  PST_RETURN_IF_ERROR(checkpointer_->Restore(*found));
  return found->manifest.step;
}

StatusOr<int> ShardKeeper::RunningLrLowerings() {
  int most = 0;
  for (int k = 0; k < ps_->num_shards(); ++k) {
    PST_ASSIGN_OR_RETURN(const ShardStatus status, ps_->GetShardStatus(k, deadline()));
    most = std::max(most, status.store.lr_lowerings);
  }
  return most;
}

std::string ShardTrouble(int shard, const StatusOr<ShardStatus>& status) {
  if (!status.ok())
    return "ps:" + std::to_string(shard) + " is down: " + status.status().ToString();
  if (!status->store.initialized) {
    return "ps:" + std::to_string(shard) + " restarted without its variables";
  }
  return "";
}

std::vector<int> SyncShards(const Placement& placement) {
  std::vector<int> shards;
  for (const Slice& s : placement.slices()) {
    if (s.dtype == DType::kFloat32 &&
        std::find(shards.begin(), shards.end(), s.shard) == shards.end()) {
      shards.push_back(s.shard);
    }
  }
  return shards;
}

}  // namespace pst
