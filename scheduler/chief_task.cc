#include "scheduler/chief_task.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <random>
#include <thread>

#include "common/signal_watcher.h"
#include "data/idx_reader.h"
#include "model/initializer.h"
#include "model/model_zoo.h"
#include "ps/ps_client.h"
#include "scheduler/checkpointer.h"
#include "scheduler/chief_service.h"
#include "scheduler/evaluator.h"
#include "scheduler/liveness_monitor.h"
#include "scheduler/event_writer.h"
#include "scheduler/metrics_writer.h"
#include "common/tensor_file.h"
#include "scheduler/sync_coordinator.h"
#include "transport/server.h"

namespace pst {
namespace {

uint64_t NewClusterId() {
  std::random_device rd;
  uint64_t id = 0;
  while (id == 0) id = (uint64_t{rd()} << 32) ^ rd();
  return id;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Stdout carries the report lines users read; glog goes to stderr.
void Print(const char* format, ...) __attribute__((format(printf, 1, 2)));
void Print(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vfprintf(stdout, format, args);
  va_end(args);
  std::fflush(stdout);
}

Status WaitForShards(PsClient& ps, const ClusterSpec& cluster, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int k = 0; k < ps.num_shards(); ++k) {
    for (;;) {
      auto status = ps.GetShardStatus(k, std::min(deadline, Clock::now() + std::chrono::seconds(1)));
      if (status.ok()) break;
      if (status.status().code() != Code::kDeadlineExceeded) return status.status();
      if (Clock::now() >= deadline) {
        return DeadlineExceeded("ps:" + std::to_string(k) + " (" + cluster.ps[k].ToString() +
                                ") did not answer within --ps_wait_timeout_ms=" +
                                std::to_string(timeout_ms));
      }
      LOG(INFO) << "waiting for ps:" << k << " at " << cluster.ps[k].ToString();
    }
  }
  return Status::OK();
}

class Chief {
 public:
  Chief(const ChiefOptions& options, std::unique_ptr<Model> model, Placement placement,
        Dataset test, std::unique_ptr<MetricsWriter> metrics, uint64_t cluster_id)
      : options_(options),
        model_(std::move(model)),
        test_(std::move(test)),
        evaluator_(model_.get(), &test_),
        metrics_(std::move(metrics)),
        cluster_id_(cluster_id),
        state_(placement.Hash(), options.train_steps,
               static_cast<int>(options.cluster.workers.size()),
               static_cast<int>(options.cluster.ps.size())),
        ps_(context_, options.cluster, std::move(placement), Identity(options, cluster_id)) {
    if (!options.checkpoint_dir.empty()) {
      checkpointer_ = std::make_unique<Checkpointer>(options.checkpoint_dir,
                                                     options.keep_checkpoints,
                                                     ps_.placement().Hash(), cluster_id, &ps_);
    }
    model_variables_.resize(model_->variables().size());
    for (size_t i = 0; i < model_variables_.size(); ++i) model_variables_[i] = i + 1;
  }

  Status Run(const std::atomic<bool>& stop) {
    if (!options_.logdir.empty()) {
      PST_ASSIGN_OR_RETURN(events_, EventWriter::Open(options_.logdir));
      LOG(INFO) << "TensorBoard events: " << events_->path();
    }
    ServerOptions server_options;
    server_options.name = "chief";
    server_options.endpoint = options_.cluster.chief.Endpoint();
    server_options.role = wire::Role::Chief;
    server_options.max_message_bytes = options_.max_message_bytes;
    server_options.num_threads = 1;
    server_options.cluster_id = cluster_id_;
    // A ps learns the cluster id at init: its heartbeats carry 0 until then.
    server_options.open_types = {wire::MessageType::JoinRequest,
                                 wire::MessageType::HeartbeatRequest};
    server_options.curve = options_.curve;
    RpcServer server(context_, server_options,
                     [this](const ReceivedMessage& r, RequestContext& c) {
                       return service_->Handle(r, c);
                     });
    if (options_.shard.mode == TrainingMode::kSync) {
      sync_ = std::make_unique<SyncCoordinator>(SyncShards(), num_workers(),
                                                options_.train_steps, &server);
    }
    service_ = std::make_unique<ChiefService>(&state_, sync_.get(), num_workers(),
                                              ps_.num_shards());
    PST_RETURN_IF_ERROR(server.Start());
    LivenessMonitor liveness(&state_, std::chrono::milliseconds(options_.heartbeat_timeout_ms));
    LOG(INFO) << "chief serving on " << server.bound_endpoint() << ", cluster id "
              << cluster_id_;
    PST_RETURN_IF_ERROR(WaitForShards(ps_, options_.cluster, options_.ps_wait_timeout_ms));
    PST_ASSIGN_OR_RETURN(const bool carried_on, CarryOnWithRunningShards());
    if (!carried_on) {
      PST_RETURN_IF_ERROR(InitializeVariables());
      PST_RETURN_IF_ERROR(RestoreNewestCheckpoint());
    }
    state_.set_state(wire::ClusterState::Training);
    if (sync_) sync_->Open(start_step_);
    start_ = Clock::now();
    LOG(INFO) << "training opened: " << num_workers() << " workers, "
              << options_.cluster.ps.size() << " ps, " << options_.train_steps << " steps, "
              << (sync_ ? "sync, " + std::to_string(options_.shard.replicas_to_aggregate) +
                              " replicas to aggregate"
                        : std::string("async"));
    PST_RETURN_IF_ERROR(FollowTraining(stop));
    training_seconds_ = Seconds(start_);
    state_.set_state(wire::ClusterState::Stopping);
    if (sync_) sync_->Close();
    if (stop.load()) {
      // Interrupted: no final evaluation or checkpoint; the ps are told to
      // stop, the workers learn it from their next report.
      ShutdownShards(std::chrono::milliseconds(1000));
      return Aborted("interrupted by a signal");
    }
    WaitForWorkersToLeave();
    PST_RETURN_IF_ERROR(Finish());
    server.Stop();
    return Status::OK();
  }

 private:
  int num_workers() const { return static_cast<int>(options_.cluster.workers.size()); }

  // The shards holding a trainable (float) variable: those that accumulate.
  std::vector<int> SyncShards() const {
    std::vector<int> shards;
    for (const Slice& s : ps_.placement().slices()) {
      if (s.dtype == DType::kFloat32 &&
          std::find(shards.begin(), shards.end(), s.shard) == shards.end()) {
        shards.push_back(s.shard);
      }
    }
    return shards;
  }

  StatusOr<int64_t> GlobalStep() {
    if (sync_) return sync_->global_step();
    return ps_.GlobalStep();
  }

  static ClientIdentity Identity(const ChiefOptions& options, uint64_t cluster_id) {
    ClientIdentity id;
    id.role = wire::Role::Chief;
    id.cluster_id = cluster_id;
    id.rpc_timeout_ms = options.rpc_timeout_ms;
    id.max_message_bytes = options.max_message_bytes;
    id.curve = options.curve;
    return id;
  }

  Status InitializeVariables() {
    std::vector<Tensor> values;
    for (const VariableSpec& spec : ps_.placement().variables()) {
      values.push_back(InitializeVariable(spec, options_.seed));
    }
    PST_RETURN_IF_ERROR(ps_.Initialize(options_.shard, values));
    LOG(INFO) << "optimizer " << options_.shard.optimizer.name << ", learning rate "
              << options_.shard.optimizer.learning_rate;
    LOG(INFO) << "initialized " << values.size() << " variables (seed " << options_.seed
              << "), placement:\n" << ps_.placement().Describe();
    return Status::OK();
  }

  // Async, a restarted chief: when every ps still serves this cluster's
  // variables, the workers kept training while the chief was away, and
  // that state is newer than any checkpoint: the chief carries on from it.
  // (Sync steps need the chief's tokens, so nothing moved: the checkpoint
  // is restored.)
  StatusOr<bool> CarryOnWithRunningShards() {
    if (sync_) return false;
    for (int k = 0; k < ps_.num_shards(); ++k) {
      auto status = ps_.GetShardStatus(k, ps_deadline());
      // Refused: the ps serves another cluster, which the next steps report.
      if (!status.ok() || !status->store.initialized) return false;
    }
    PST_ASSIGN_OR_RETURN(start_step_, ps_.GlobalStep());
    LOG(INFO) << "every ps still serves this cluster's variables: carrying on from global step "
              << start_step_ << " without restoring a checkpoint";
    return true;
  }

  // Overwrites the fresh variables with the newest valid checkpoint, if any.
  Status RestoreNewestCheckpoint() {
    if (!checkpointer_) return Status::OK();
    PST_ASSIGN_OR_RETURN(std::optional<FoundCheckpoint> found, checkpointer_->FindNewest());
    if (!found) {
      LOG(INFO) << "no checkpoint in " << options_.checkpoint_dir << ": starting fresh";
      return Status::OK();
    }
    PST_RETURN_IF_ERROR(checkpointer_->Restore(*found));
    start_step_ = found->manifest.step;
    return Status::OK();
  }

  // A checkpoint is due every --checkpoint_every_steps / _secs.
  bool CheckpointDue(int64_t step) const {
    if (!checkpointer_) return false;
    const auto& o = options_;
    return (o.checkpoint_every_steps > 0 &&
            step / o.checkpoint_every_steps > last_checkpoint_step_ / o.checkpoint_every_steps) ||
           (o.checkpoint_every_secs > 0 &&
            Seconds(last_checkpoint_time_) >= o.checkpoint_every_secs);
  }

  // Sync: every shard must be at the same step, so new steps wait until the
  // checkpoint is written.
  Status SaveCheckpoint(int64_t step) {
    if (sync_) {
      PST_ASSIGN_OR_RETURN(step, sync_->Pause(ps_deadline()));
    }
    const Status saved = checkpointer_->Save(step);
    if (sync_) sync_->Resume();
    PST_RETURN_IF_ERROR(saved);
    last_checkpoint_step_ = step;
    last_checkpoint_time_ = Clock::now();
    return Status::OK();
  }

  StatusOr<Evaluation> Evaluate() {
    PST_RETURN_IF_ERROR(ps_.Pull(model_variables_, &params_));
    return evaluator_.Evaluate(params_);
  }

  // What the shards counted, over the whole cluster. Every push reaches
  // every shard holding trainable variables, so each of them counts the same
  // pushes: per-push counts take the largest shard's.
  struct ClusterCounts {
    uint64_t staleness_sum = 0, staleness_count = 0;
    int64_t staleness_max = 0;
    uint64_t dropped = 0, scaled = 0;
    uint64_t stale_dropped = 0;       // sync: stale pushes; async: dropped by policy
    std::vector<uint64_t> aggregated;  // sync: per worker, pushes applied
    std::vector<ShardStatus> shards;   // each shard's own load
  };
  StatusOr<ClusterCounts> CollectCounts() {
    ClusterCounts c;
    c.aggregated.assign(num_workers(), 0);
    for (int k = 0; k < ps_.num_shards(); ++k) {
      PST_ASSIGN_OR_RETURN(ShardStatus s, ps_.GetShardStatus(k, ps_deadline()));
      c.shards.push_back(s);
      c.staleness_sum += s.store.staleness_sum;
      c.staleness_count += s.store.staleness_count;
      c.staleness_max = std::max(c.staleness_max, s.store.staleness_max);
      c.dropped += s.store.gradients_dropped;
      c.scaled += s.store.gradients_scaled;
      c.stale_dropped = std::max(c.stale_dropped,
                                 sync_ ? s.store.stale_pushes : s.store.gradients_dropped);
      const auto& per_worker = s.store.aggregated_per_worker;
      for (size_t w = 0; w < per_worker.size() && w < c.aggregated.size(); ++w) {
        c.aggregated[w] = std::max(c.aggregated[w], per_worker[w]);
      }
    }
    return c;
  }

  Clock::time_point ps_deadline() const {
    return Clock::now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
  }

  // `elapsed`: seconds of training so far.
  Status WriteMetrics(int64_t step, const Evaluation& eval, double elapsed) {
    MetricsRecord r;
    r.Add("time", elapsed).Add("step", step).Add("train_loss", last_loss_);
    r.Add("steps_per_sec", elapsed > 0 ? (step - start_step_) / elapsed : 0);
    r.Add("examples_per_sec", elapsed > 0 ? state_.total_examples() / elapsed : 0);
    r.Add("live_workers", state_.live_workers())
        .Add("live_ps", state_.live_ps())
        .Add("task_deaths", state_.deaths());
    r.Add("test_loss", eval.loss).Add("test_accuracy", eval.accuracy);
    PST_ASSIGN_OR_RETURN(ClusterCounts c, CollectCounts());
    const double staleness_mean =
        c.staleness_count ? double(c.staleness_sum) / c.staleness_count : 0;
    if (events_) {
      PST_RETURN_IF_ERROR(events_->AddScalars(
          step, {{"loss", last_loss_},
                 {"test_loss", eval.loss},
                 {"test_accuracy", eval.accuracy},
                 {"steps_per_sec", elapsed > 0 ? (step - start_step_) / elapsed : 0},
                 {"staleness_mean", staleness_mean},
                 {"gradients_dropped", static_cast<double>(c.stale_dropped)}}));
    }
    r.Add("staleness_mean", staleness_mean)
        .Add("staleness_max", c.staleness_max)
        .Add("gradients_dropped", c.dropped)
        .Add("gradients_scaled", c.scaled)
        .Add("stale_gradients_dropped", c.stale_dropped);
    // Per-shard load, so an imbalance shows.
    for (size_t k = 0; k < c.shards.size(); ++k) {
      const std::string ps = "ps" + std::to_string(k) + "_";
      r.Add(ps + "bytes_held", c.shards[k].store.bytes)
          .Add(ps + "bytes_in", c.shards[k].bytes_in)
          .Add(ps + "bytes_out", c.shards[k].bytes_out)
          .Add(ps + "updates_applied", c.shards[k].store.updates_applied)
          .Add(ps + "queue_depth", c.shards[k].queue_depth);
    }
    return metrics_->Write(r);
  }

  Status FollowTraining(const std::atomic<bool>& stop) {
    int64_t next_log = start_step_ + options_.log_every_steps;
    int64_t next_eval = start_step_ + options_.eval_every_steps;
    int64_t step = start_step_;
    last_checkpoint_step_ = start_step_;
    auto next_probe = Clock::now();
    while (!stop.load()) {
      std::string trouble;
      if (Clock::now() >= next_probe) {
        next_probe = Clock::now() + kShardProbeInterval;
        trouble = ProbeShards();
      }
      StatusOr<int64_t> current = trouble.empty() ? GlobalStep() : StatusOr<int64_t>(0);
      if (!current.ok()) trouble = current.status().ToString();
      if (!trouble.empty()) {
        PST_RETURN_IF_ERROR(Recover(trouble));
        continue;
      }
      step = *current;
      // At the end the workers leave: nothing to wait for.
      if (step < options_.train_steps) SayIfTooFewWorkers();
      if (step >= next_log || step >= options_.train_steps) {
        const ReportWindow w = state_.TakeWindow();
        if (w.reports > 0) {
          last_loss_ = w.mean_loss;
          Print("Step: %lld, Epoch: %lld, Batch: %lld of %lld, Cost: %.4f, AvgTime: %.2f ms\n",
                static_cast<long long>(step), static_cast<long long>(w.epoch + 1),
                static_cast<long long>(w.batch + 1),
                static_cast<long long>(w.batches_per_epoch), w.mean_loss, w.mean_step_ms);
        }
        while (next_log <= step) next_log += options_.log_every_steps;
      }
      if (step >= options_.train_steps) break;
      if (options_.eval_every_steps > 0 && step >= next_eval) {
        PST_RETURN_IF_ERROR(RecoverIfPsFailed(EvaluateAndRecord(step)));
        while (next_eval <= step) next_eval += options_.eval_every_steps;
      }
      if (CheckpointDue(step)) PST_RETURN_IF_ERROR(RecoverIfPsFailed(SaveCheckpoint(step)));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (stop.load()) LOG(WARNING) << "interrupted at global step " << step;
    return Status::OK();
  }

  // `patience`: how long to wait for each answer (short when interrupted:
  // the ps may be stopping too).
  void ShutdownShards(std::chrono::milliseconds patience) {
    for (int k = 0; k < ps_.num_shards(); ++k) {
      Status s = ps_.Shutdown(k, Clock::now() + patience);
      if (!s.ok()) LOG(WARNING) << "shutting down ps:" << k << ": " << s.ToString();
    }
  }

  static constexpr std::chrono::milliseconds kShardProbeInterval{500};

  // "" when every shard answers within a second with its variables; else
  // what is wrong (a dead ps, or one restarted empty). Sync: also passes on
  // each shard's step, as its notices do.
  std::string ProbeShards() {
    for (int k = 0; k < ps_.num_shards(); ++k) {
      auto status = ps_.GetShardStatus(k, Clock::now() + std::chrono::seconds(1));
      if (!status.ok()) return "ps:" + std::to_string(k) + " is down: " + status.status().ToString();
      if (!status->store.initialized) {
        return "ps:" + std::to_string(k) + " restarted without its variables";
      }
      // Sync: step notices are fire-and-forget; one lost (e.g. while the
      // chief restarted) would stall the step for good. The probe repairs it.
      if (sync_ && status->store.sync_step > 0) sync_->ShardApplied(k, status->store.sync_step - 1);
    }
    return "";
  }

  Status EvaluateAndRecord(int64_t step) {
    PST_ASSIGN_OR_RETURN(Evaluation e, Evaluate());
    LOG(INFO) << "step " << step << ": test accuracy " << e.accuracy << ", test loss " << e.loss;
    return WriteMetrics(step, e, Seconds(start_));
  }

  // A ps that dies can fail any request before the probe notices it: such
  // failures (deadline, unavailable, not initialized) lead to Recover();
  // other errors are returned.
  Status RecoverIfPsFailed(const Status& status) {
    const Code c = status.code();
    if (c != Code::kDeadlineExceeded && c != Code::kUnavailable &&
        c != Code::kFailedPrecondition) {
      return status;
    }
    return Recover(status.ToString());
  }

  // Pauses training until every ps answers, then starts the whole cluster
  // again from the newest checkpoint (from scratch without one): every
  // shard goes back to the same step, so the model stays consistent.
  Status Recover(const std::string& why) {
    LOG(WARNING) << "pausing training: " << why;
    PST_RETURN_IF_ERROR(WaitForShards(ps_, options_.cluster, options_.ps_wait_timeout_ms));
    PST_RETURN_IF_ERROR(InitializeVariables());
    start_step_ = 0;
    PST_RETURN_IF_ERROR(RestoreNewestCheckpoint());
    last_checkpoint_step_ = start_step_;
    if (sync_) sync_->Open(start_step_);
    LOG(WARNING) << "training resumes at global step " << start_step_;
    return Status::OK();
  }

  // Sync: steps need N live workers; below that the cluster waits for
  // workers to come back, and says so once per heartbeat interval.
  void SayIfTooFewWorkers() {
    if (!sync_ || Clock::now() < next_too_few_notice_) return;
    const int live = state_.live_workers();
    const int needed = options_.shard.replicas_to_aggregate;
    if (live >= needed || Seconds(start_) * 1000 < options_.heartbeat_timeout_ms) return;
    LOG(WARNING) << "waiting: " << live << " live workers, each step needs " << needed;
    next_too_few_notice_ = Clock::now() + std::chrono::milliseconds(options_.heartbeat_timeout_ms);
  }

  void WaitForWorkersToLeave() {
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
    while (!state_.AllJoinedWorkersLeft()) {
      if (Clock::now() >= deadline) {
        LOG(WARNING) << "not every worker said goodbye within --rpc_timeout_ms; stopping anyway";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  Status Finish() {
    PST_ASSIGN_OR_RETURN(int64_t step, GlobalStep());
    PST_ASSIGN_OR_RETURN(ClusterCounts counts, CollectCounts());
    const ReportWindow w = state_.TakeWindow();
    if (w.reports > 0) last_loss_ = w.mean_loss;
    PST_ASSIGN_OR_RETURN(Evaluation e, Evaluate());
    PST_RETURN_IF_ERROR(WriteMetrics(step, e, training_seconds_));
    if (!options_.run_dir.empty()) {
      NamedTensors model;
      for (size_t i = 0; i < params_.size(); ++i) {
        model.emplace_back(model_->variables()[i].name, params_[i]);
      }
      PST_RETURN_IF_ERROR(WriteTensorFile(options_.run_dir + "/model.bin", model).status());
    }
    if (checkpointer_ && step != last_checkpoint_step_) PST_RETURN_IF_ERROR(SaveCheckpoint(step));
    ShutdownShards(std::chrono::milliseconds(options_.rpc_timeout_ms));
    Print("Test-Accuracy: %.4f\n", e.accuracy);
    Print("Total Time: %.2fs\n", training_seconds_);
    Print("Final Cost: %.4f\n", last_loss_);
    Print("Global-Step: %lld\n", static_cast<long long>(step));
    Print("Stale-Gradients-Dropped: %llu\n", static_cast<unsigned long long>(counts.stale_dropped));
    if (sync_) {
      std::string aggregated;
      for (int i = 0; i < num_workers(); ++i) {
        aggregated += (i ? " worker:" : "worker:") + std::to_string(i) + "=" +
                      std::to_string(counts.aggregated[i]);
      }
      Print("Aggregated-Gradients: %s\n", aggregated.c_str());
    }
    return Status::OK();
  }

  const ChiefOptions& options_;
  zmq::context_t context_{1};
  std::unique_ptr<Model> model_;
  Dataset test_;
  Evaluator evaluator_;
  std::unique_ptr<MetricsWriter> metrics_;
  std::unique_ptr<EventWriter> events_;  // null without --logdir
  const uint64_t cluster_id_;
  ChiefState state_;
  PsClient ps_;
  std::unique_ptr<SyncCoordinator> sync_;
  std::unique_ptr<ChiefService> service_;
  std::vector<int> model_variables_;
  std::vector<Tensor> params_;
  Clock::time_point start_ = Clock::now();
  double last_loss_ = 0;
  double training_seconds_ = 0;  // from opening training to the last step
  std::unique_ptr<Checkpointer> checkpointer_;  // null without --checkpoint_dir
  int64_t start_step_ = 0;                      // 0, or the restored checkpoint's
  int64_t last_checkpoint_step_ = 0;
  Clock::time_point last_checkpoint_time_ = Clock::now();
  Clock::time_point next_too_few_notice_ = Clock::now();
};

}  // namespace

Status RunChief(const ChiefOptions& options) {
  std::atomic<bool> stop{false};
  SignalWatcher signals([&stop](int signal) {
    LOG(WARNING) << "signal " << signal << ": stopping";
    stop.store(true);
  });
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, MakeModel(options.model));
  PST_ASSIGN_OR_RETURN(Dataset test, LoadMnist(options.data_dir, /*train=*/false));
  PlacementOptions placement_options = options.placement;
  placement_options.num_shards = static_cast<int>(options.cluster.ps.size());
  PST_ASSIGN_OR_RETURN(Placement placement,
                       Placement::Compute(WithGlobalStep(model->variables()), placement_options));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<MetricsWriter> metrics,
                       MetricsWriter::Open(options.run_dir.empty()
                                               ? ""
                                               : options.run_dir + "/metrics.jsonl"));
  // A restarted chief keeps the id its ps tasks and workers already use.
  uint64_t cluster_id = options.cluster_id;
  if (cluster_id == 0 && !options.checkpoint_dir.empty()) {
    cluster_id = NewestCheckpointClusterId(options.checkpoint_dir).value_or(0);
    if (cluster_id) LOG(INFO) << "keeping cluster id " << cluster_id << " of the last checkpoint";
  }
  if (cluster_id == 0) cluster_id = NewClusterId();
  Chief chief(options, std::move(model), std::move(placement), std::move(test),
              std::move(metrics), cluster_id);
  return chief.Run(stop);
}

}  // namespace pst
