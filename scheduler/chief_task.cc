#include "scheduler/chief_task.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <system_error>
#include <thread>

#include "common/signal_watcher.h"
#include "common/stop_signals.h"
#include "common/tensor_file.h"
#include "export/onnx_export.h"
#include "job/model_file.h"
#include "model/initializer.h"
#include "model/model_zoo.h"
#include "monitoring/metrics_http_server.h"
#include "monitoring/training_metrics.h"
#include "ps/ps_client.h"
#include "scheduler/checkpoint_schedule.h"
#include "scheduler/checkpointer.h"
#include "scheduler/chief_service.h"
#include "scheduler/evaluator.h"
#include "scheduler/event_writer.h"
#include "scheduler/liveness_monitor.h"
#include "scheduler/metrics_writer.h"
#include "scheduler/progress.h"
#include "scheduler/progress_line.h"
#include "scheduler/sync_coordinator.h"
#include "transport/bind_address.h"
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

// metrics.jsonl's format (docs/FORMATS.md).
constexpr int kMetricsFormatVersion = 1;

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

// Returns Aborted as soon as `stop` is set (a signal), not at the deadline.
Status WaitForShards(PsClient& ps, const ClusterSpec& cluster, int timeout_ms,
                     const std::atomic<bool>& stop) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int k = 0; k < ps.num_shards(); ++k) {
    for (;;) {
      if (stop.load())
        return Aborted("interrupted by a signal while waiting for ps:" + std::to_string(k));
      const auto attempt = std::min(deadline, Clock::now() + std::chrono::milliseconds(250));
      auto status = ps.GetShardStatus(k, attempt);
      if (status.ok()) break;
      if (status.status().code() != Code::kDeadlineExceeded) return status.status();
      if (Clock::now() >= deadline) {
        return DeadlineExceeded(
            "ps:" + std::to_string(k) + " (" + cluster.ps[k].ToString() +
            ") did not answer within --ps_wait_timeout_ms=" + std::to_string(timeout_ms));
      }
      LOG(INFO) << "waiting for ps:" << k << " at " << cluster.ps[k].ToString();
    }
  }
  return Status::OK();
}

class Chief {
 public:
  Chief(const ChiefOptions& options, std::unique_ptr<Model> model, Placement placement, Job job,
        std::unique_ptr<MetricsWriter> metrics, uint64_t cluster_id)
      : options_(options),
        model_(std::move(model)),
        test_(std::move(job.data.test)),
        validation_(std::move(job.data.validation)),
        job_(std::move(job)),
        evaluator_(model_.get(), &test_),
        validation_evaluator_(model_.get(), &validation_),
        metrics_(std::move(metrics)),
        cluster_id_(cluster_id),
        state_(placement.Hash(), options.train_steps,
               static_cast<int>(options.cluster.workers.size()),
               static_cast<int>(options.cluster.ps.size()), job_.Describe()),
        ps_(context_, options.cluster, std::move(placement), Identity(options, cluster_id)),
        schedule_(ScheduleOptions(options), 0, Clock::now()) {
    if (!options.checkpoint_dir.empty()) {
      checkpointer_ =
          std::make_unique<Checkpointer>(options.checkpoint_dir, options.keep_checkpoints,
                                         ps_.placement().Hash(), cluster_id, &ps_);
    }
    model_variables_.resize(model_->variables().size());
    for (size_t i = 0; i < model_variables_.size(); ++i) model_variables_[i] = i + 1;
  }

  Status Run(const std::atomic<bool>& stop) {
    stop_ = &stop;
    if (!options_.logdir.empty()) {
      PST_ASSIGN_OR_RETURN(events_,
                           EventWriter::Open(RunEventDir(options_.logdir, options_.run_dir)));
      LOG(INFO) << "TensorBoard events: " << events_->path();
    }
    ServerOptions server_options;
    server_options.name = "chief";
    const BindAddress bind = ChooseBindAddress(options_.cluster.chief.host, options_.bind_host);
    server_options.endpoint = bind.Endpoint(options_.cluster.chief.port);
    LOG(INFO) << "chief (" << options_.cluster.chief.ToString() << ") binds " << bind.address
              << " (" << bind.reason << ")";
    server_options.role = wire::Role::Chief;
    server_options.max_message_bytes = options_.max_message_bytes;
    server_options.num_threads = 1;
    server_options.cluster_id = cluster_id_;
    // A ps learns the cluster id at init: its heartbeats carry 0 until then.
    server_options.open_types = {wire::MessageType::JoinRequest,
                                 wire::MessageType::HeartbeatRequest};
    server_options.curve = options_.curve;
    RpcServer server(context_, server_options, [this](const ReceivedMessage& r, RequestContext& c) {
      return service_->Handle(r, c);
    });
    if (options_.shard.mode == TrainingMode::kSync) {
      sync_ = std::make_unique<SyncCoordinator>(SyncShards(), num_workers(), options_.train_steps,
                                                &server);
    }
    service_ =
        std::make_unique<ChiefService>(&state_, sync_.get(), num_workers(), ps_.num_shards());
    PST_RETURN_IF_ERROR(server.Start());
    PST_ASSIGN_OR_RETURN(std::unique_ptr<MetricsHttpServer> endpoint,
                         StartMetricsEndpoint(bind.address));
    LivenessMonitor liveness(&state_, std::chrono::milliseconds(options_.heartbeat_timeout_ms));
    LOG(INFO) << "chief serving on " << server.bound_endpoint() << ", cluster id " << cluster_id_;
    PST_RETURN_IF_ERROR(WaitForShards(ps_, options_.cluster, options_.ps_wait_timeout_ms, stop));
    PST_ASSIGN_OR_RETURN(untrained_, Evaluate(InitialModelValues()));
    PST_ASSIGN_OR_RETURN(const bool carried_on, CarryOnWithRunningShards());
    if (!carried_on) {
      PST_RETURN_IF_ERROR(InitializeVariables());
      PST_RETURN_IF_ERROR(RestoreNewestCheckpoint());
    }
    state_.set_state(wire::ClusterState::Training);
    if (sync_) sync_->Open(start_step_);
    start_ = Clock::now();
    schedule_.Restart(start_step_, start_);
    InheritRunStart();
    LOG(INFO) << "training opened: " << num_workers() << " workers, " << options_.cluster.ps.size()
              << " ps, " << options_.train_steps << " steps, "
              << (sync_ ? "sync, " + std::to_string(options_.shard.replicas_to_aggregate) +
                              " replicas to aggregate"
                        : std::string("async"));
    if (Status trained = FollowTraining(stop); !trained.ok()) {
      if (trained.code() == Code::kAborted) StopCluster();
      return trained;
    }
    training_seconds_ = Seconds(start_);
    if (stop.load()) return StopOnSignal();
    StopWorkers();
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

  // Async: read from the shard holding it with the probes' patience, so a
  // ps that died is noticed within a second, not after --rpc_timeout_ms.
  StatusOr<int64_t> GlobalStep() {
    if (sync_) return sync_->global_step();
    int shard = 0;
    for (const Slice& slice : ps_.placement().slices()) {
      if (slice.name == kGlobalStepName) shard = slice.shard;
    }
    auto status = ps_.GetShardStatus(shard, Clock::now() + kShardProbePatience);
    if (!status.ok()) {
      return Unavailable("ps:" + std::to_string(shard) + " is down: " + status.status().ToString());
    }
    return status->store.global_step;
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

  // The seeded initial values of every variable, global step first.
  std::vector<Tensor> InitialValues() const {
    std::vector<Tensor> values;
    for (const VariableSpec& spec : ps_.placement().variables()) {
      values.push_back(InitializeVariable(spec, options_.seed));
    }
    return values;
  }
  std::vector<Tensor> InitialModelValues() const {
    std::vector<Tensor> values = InitialValues();
    values.erase(values.begin());  // the global step
    return values;
  }

  Status InitializeVariables() {
    std::vector<Tensor> values = InitialValues();
    PST_RETURN_IF_ERROR(ps_.Initialize(options_.shard, values));
    LOG(INFO) << "optimizer " << options_.shard.optimizer.name << ", learning rate "
              << options_.shard.optimizer.learning_rate;
    LOG(INFO) << "initialized " << values.size() << " variables (seed " << options_.seed
              << "), placement:\n"
              << ps_.placement().Describe();
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
    LOG(INFO) << "every ps still serves this cluster's variables: carrying on "
                 "from global step "
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

  // A chief that restored a checkpoint or carried on from running ps
  // continues a run that began earlier: its report covers the whole run.
  void InheritRunStart() {
    run_started_unix_ = UnixSeconds();
    if (!checkpointer_ || start_step_ == 0) return;
    const std::optional<CheckpointManifest> newest = NewestManifest(options_.checkpoint_dir);
    if (!newest || newest->run_started_unix <= 0) return;
    earlier_seconds_ = std::max(0.0, run_started_unix_ - newest->run_started_unix);
    run_started_unix_ = newest->run_started_unix;
    LOG(INFO) << "this run began " << earlier_seconds_ << " s ago";
  }

  static CheckpointScheduleOptions ScheduleOptions(const ChiefOptions& o) {
    return {o.checkpoint_every_steps, o.checkpoint_every_secs, o.max_checkpoint_failures};
  }

  // Sync: every shard must be at the same step, so new steps wait until the
  // checkpoint is written. A save that fails while every shard still serves
  // failed for want of storage (a full disk): it is logged and training goes
  // on, until --max_checkpoint_failures in a row stop the run (Aborted). A
  // ps that is gone is returned as Unavailable, for a recovery.
  Status SaveCheckpoint(int64_t step) {
    if (sync_) {
      StatusOr<int64_t> paused = sync_->Pause(ps_deadline());
      if (!paused.ok()) {
        sync_->Resume();
        if (const std::string trouble = ProbeShards(); !trouble.empty()) {
          return Unavailable(trouble);
        }
        // Every shard serves, but the step in flight did not finish (too few
        // workers push): try again at the next checkpoint time.
        LOG(WARNING) << "checkpoint postponed: " << paused.status().message();
        schedule_.Postponed(step, Clock::now());
        return Status::OK();
      }
      step = *paused;
    }
    const Status saved = checkpointer_->Save(step, static_cast<int64_t>(run_started_unix_));
    if (sync_) sync_->Resume();
    if (saved.ok()) {
      schedule_.Saved(step, Clock::now());
      last_checkpoint_ = Clock::now();
      return Status::OK();
    }
    if (const std::string trouble = ProbeShards(); !trouble.empty()) {
      return Unavailable(trouble + " (" + saved.message() + ")");
    }
    const int limit = schedule_.max_failures();
    if (schedule_.Failed(step, Clock::now()) == AfterSaveFailure::kGiveUp) {
      return Aborted(
          saved.message() + "; stopping: " + std::to_string(limit) +
          " checkpoints in a row failed (--max_checkpoint_failures=" + std::to_string(limit) + ")");
    }
    LOG(ERROR) << saved.message() << "; training goes on, the next checkpoint is tried when due ("
               << schedule_.consecutive_failures() << " of --max_checkpoint_failures=" << limit
               << " failures in a row)";
    return Status::OK();
  }

  // The checkpoint at the last step, tried once. It never stops the run for
  // want of storage (the result is complete: the failure is logged, and OK
  // returned); a lost ps is returned (Unavailable), for a recovery.
  Status SaveFinalCheckpoint(int64_t step) {
    final_checkpoint_tried_ = true;
    const Status saved = SaveCheckpoint(step);
    if (saved.ok() || saved.code() == Code::kUnavailable ||
        saved.code() == Code::kDeadlineExceeded) {
      return saved;
    }
    LOG(ERROR) << "the final checkpoint failed: " << saved.ToString()
               << "; training is complete, the newest checkpoint is at step "
               << schedule_.last_saved_step();
    return Status::OK();
  }

  StatusOr<Evaluation> Evaluate(const std::vector<Tensor>& params) {
    return evaluator_.Evaluate(params);
  }
  // Evaluates the cluster's current model; a non-finite test loss stops the
  // run (Aborted): the model is ruined.
  StatusOr<Evaluation> EvaluateCluster(int64_t step) {
    PST_RETURN_IF_ERROR(ps_.Pull(model_variables_, &params_));
    PST_ASSIGN_OR_RETURN(Evaluation e, Evaluate(params_));
    if (!std::isfinite(e.loss)) {
      return Diverged("the test loss is " + std::to_string(e.loss) + " at global step " +
                      std::to_string(step));
    }
    if (validation_.size > 0) {
      PST_ASSIGN_OR_RETURN(last_validation_, validation_evaluator_.Evaluate(params_));
    }
    return e;
  }
  static Status Diverged(const std::string& what) {
    return Aborted("training diverged: " + what + "; try a lower --learning_rate");
  }

  // What the shards counted, over the whole cluster. Every push reaches
  // every shard holding trainable variables, so each of them counts the same
  // pushes: per-push counts take the largest shard's.
  struct ClusterCounts {
    uint64_t staleness_sum = 0, staleness_count = 0;
    int64_t staleness_max = 0;
    uint64_t dropped = 0, scaled = 0;
    uint64_t stale_dropped = 0;        // sync: stale pushes; async: dropped by policy
    std::vector<uint64_t> aggregated;  // sync: per worker, pushes applied
    std::vector<ShardStatus> shards;   // each shard's own load
  };
  StatusOr<ClusterCounts> CollectCounts() {
    std::vector<ShardStatus> shards;
    for (int k = 0; k < ps_.num_shards(); ++k) {
      PST_ASSIGN_OR_RETURN(ShardStatus s, ps_.GetShardStatus(k, ps_deadline()));
      shards.push_back(std::move(s));
    }
    return CountsOf(std::move(shards));
  }

  ClusterCounts CountsOf(std::vector<ShardStatus> shards) const {
    ClusterCounts c;
    c.aggregated.assign(num_workers(), 0);
    for (const ShardStatus& s : shards) {
      c.staleness_sum += s.store.staleness_sum;
      c.staleness_count += s.store.staleness_count;
      c.staleness_max = std::max(c.staleness_max, s.store.staleness_max);
      c.dropped += s.store.gradients_dropped;
      c.scaled += s.store.gradients_scaled;
      c.stale_dropped =
          std::max(c.stale_dropped, sync_ ? s.store.stale_pushes : s.store.gradients_dropped);
      const auto& per_worker = s.store.aggregated_per_worker;
      for (size_t w = 0; w < per_worker.size() && w < c.aggregated.size(); ++w) {
        c.aggregated[w] = std::max(c.aggregated[w], per_worker[w]);
      }
    }
    c.shards = std::move(shards);
    return c;
  }

  Clock::time_point ps_deadline() const {
    return Clock::now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
  }

  // `elapsed`: seconds of training so far.
  Status WriteMetrics(int64_t step, const Evaluation& eval, double elapsed) {
    MetricsRecord r;
    // The format's version: keys are added over time, never renamed.
    r.Add("format_version", kMetricsFormatVersion);
    r.Add("time", elapsed).Add("step", step).Add("train_loss", last_loss_);
    r.Add("steps_per_sec", elapsed > 0 ? (step - start_step_) / elapsed : 0);
    r.Add("examples_per_sec", elapsed > 0 ? state_.total_examples() / elapsed : 0);
    r.Add("live_workers", state_.live_workers())
        .Add("live_ps", state_.live_ps())
        .Add("task_deaths", state_.deaths());
    r.Add("test_loss", eval.loss).Add("test_accuracy", eval.accuracy);
    if (last_validation_) {
      r.Add("validation_loss", last_validation_->loss)
          .Add("validation_accuracy", last_validation_->accuracy);
    }
    PST_ASSIGN_OR_RETURN(ClusterCounts c, CollectCounts());
    // Loss, steps/s and staleness go to TensorBoard every --log_every_steps
    // (WriteTrainingEvents); here what only an evaluation knows.
    if (events_) {
      PST_RETURN_IF_ERROR(
          events_->AddScalars(step, {{"test_loss", eval.loss},
                                     {"test_accuracy", eval.accuracy},
                                     {"gradients_dropped", static_cast<double>(c.stale_dropped)}}));
    }
    training_metrics_.Update([&](TrainingSnapshot& s) {
      s.evaluated = true;
      s.test_accuracy = eval.accuracy;
      s.test_loss = eval.loss;
      s.gradients_dropped = c.dropped;
      s.stale_gradients_dropped = c.stale_dropped;
    });
    r.Add("staleness_mean", StalenessMean(c))
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

  static double StalenessMean(const ClusterCounts& c) {
    return c.staleness_count ? double(c.staleness_sum) / c.staleness_count : 0;
  }

  // Every --log_every_steps, so TensorBoard plots training as it goes, not
  // only at the evaluations. Steps/s over the progress window, as the
  // progress line shows it.
  // The staleness from the shards' last probe (at most kShardProbeInterval
  // old): asking every shard again at each log step would cost more.
  Status WriteTrainingEvents(int64_t step, const ProgressSnapshot& progress) {
    if (!events_) return Status::OK();
    return events_->AddScalars(step, {{"loss", last_loss_},
                                      {"steps_per_sec", progress.steps_per_sec},
                                      {"staleness_mean", StalenessMean(CountsOf(probed_))}});
  }

  // One Step line and one TensorBoard point for the workers' reports in `w`.
  Status LogTraining(int64_t step, const ReportWindow& w, const ProgressSnapshot& progress) {
    last_window_ = w;
    last_loss_ = w.mean_loss;
    Print(
        "Step: %lld, Epoch: %lld, Batch: %lld of %lld, Cost: %.4f, "
        "AvgTime: %.2f ms\n",
        static_cast<long long>(step), static_cast<long long>(w.epoch + 1),
        static_cast<long long>(w.batch + 1), static_cast<long long>(w.batches_per_epoch),
        w.mean_loss, w.mean_step_ms);
    return WriteTrainingEvents(step, progress);
  }

  // Long enough to smooth evaluations and checkpoints out of the ETA, short
  // enough to follow a change of pace (a worker lost or back).
  static constexpr std::chrono::seconds kProgressWindow{20};

  Status FollowTraining(const std::atomic<bool>& stop) {
    Progress progress(options_.train_steps, start_, kProgressWindow);
    ProgressLine line(stdout, isatty(fileno(stdout)) == 1,
                      std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(options_.progress_every_secs)));
    const bool show_progress = options_.progress_every_secs > 0;
    int64_t next_log = start_step_ + options_.log_every_steps;
    int64_t next_eval = start_step_ + options_.eval_every_steps;
    int64_t step = start_step_;
    auto next_probe = Clock::now();
    while (!stop.load()) {
      std::string trouble;
      if (Clock::now() >= next_probe) {
        next_probe = Clock::now() + kShardProbeInterval;
        trouble = ProbeShards();
      }
      StatusOr<int64_t> current = trouble.empty() ? GlobalStep() : StatusOr<int64_t>(0);
      if (!current.ok()) trouble = current.status().message();
      if (!trouble.empty()) {
        PST_RETURN_IF_ERROR(Recover(trouble));
        continue;
      }
      const int64_t previous = step;
      step = *current;
      // A recovery rolled the cluster back: report and evaluate the steps
      // trained again, not only those past the old high-water mark.
      if (step < previous) {
        next_log = step + options_.log_every_steps;
        next_eval = step + options_.eval_every_steps;
      }
      PublishProgress(step);
      const auto now = Clock::now();
      progress.Observe(now, step, state_.total_examples());
      if (const std::string bad = state_.non_finite_loss(); !bad.empty()) {
        return Diverged(bad + " (global step " + std::to_string(step) + ")");
      }
      // At the end the workers leave: nothing to wait for.
      if (step < options_.train_steps) SayIfTooFewWorkers();
      last_progress_ = progress.Snapshot();
      // The last steps' line waits for Finish: their reports may still be
      // on their way when the global step reaches --train_steps.
      if (step >= next_log && step < options_.train_steps) {
        const ReportWindow w = state_.TakeWindow();
        if (w.reports > 0) {
          line.Clear();
          PST_RETURN_IF_ERROR(RecoverIfPsFailed(LogTraining(step, w, last_progress_)));
        }
        while (next_log <= step) next_log += options_.log_every_steps;
      }
      const bool done = step >= options_.train_steps;
      if (show_progress && (done || line.Due(now))) {
        line.Show(now, FormatProgress(last_progress_, last_loss_, last_test_accuracy_));
      }
      if (done) {
        // Sync: the workers wait for the final checkpoint (SyncCoordinator),
        // so a ps lost before it is saved is recovered like any other, and
        // the steps rolled back are trained again.
        if (sync_ && checkpointer_ && step != schedule_.last_saved_step()) {
          PST_RETURN_IF_ERROR(RecoverIfPsFailed(SaveFinalCheckpoint(step)));
          if (sync_->global_step() < options_.train_steps) continue;  // rolled back
        }
        line.End();
        break;
      }
      if (options_.eval_every_steps > 0 && step >= next_eval) {
        PST_RETURN_IF_ERROR(RecoverIfPsFailed(EvaluateAndRecord(step)));
        while (next_eval <= step) next_eval += options_.eval_every_steps;
      }
      if (checkpointer_ && schedule_.Due(step, Clock::now())) {
        PST_RETURN_IF_ERROR(RecoverIfPsFailed(SaveCheckpoint(step)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    line.End();  // a warning that follows keeps the last progress line
    if (stop.load()) LOG(WARNING) << "interrupted at global step " << step;
    return Status::OK();
  }

  // Null without --metrics_port.
  StatusOr<std::unique_ptr<MetricsHttpServer>> StartMetricsEndpoint(const std::string& address) {
    if (options_.metrics_port == 0) return std::unique_ptr<MetricsHttpServer>();
    MetricsHttpServerOptions o;
    o.host = address;
    o.port = options_.metrics_port;
    auto endpoint =
        std::make_unique<MetricsHttpServer>(o, [this] { return training_metrics_.Text(); });
    PST_RETURN_IF_ERROR(endpoint->Start());
    LOG(INFO) << "metrics on http://" << o.host << ":" << endpoint->port() << "/metrics";
    return endpoint;
  }

  // What the metrics endpoint serves, as of the main loop's newest look.
  void PublishProgress(int64_t step) {
    const double elapsed = Seconds(start_);
    training_metrics_.Update([&](TrainingSnapshot& s) {
      s.global_step = step;
      s.train_steps = options_.train_steps;
      s.steps_per_second = elapsed > 0 ? (step - start_step_) / elapsed : 0;
      s.examples_per_second = elapsed > 0 ? state_.total_examples() / elapsed : 0;
      s.train_loss = last_loss_;
      s.live_workers = state_.live_workers();
      s.live_ps = state_.live_ps();
      s.task_deaths = state_.deaths();
      s.seconds_since_checkpoint = last_checkpoint_ ? Seconds(*last_checkpoint_) : -1;
      s.consecutive_checkpoint_failures = schedule_.consecutive_failures();
    });
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
  static constexpr std::chrono::milliseconds kShardProbePatience{1000};

  // "" when every shard answers within a second with its variables; else
  // what is wrong (a dead ps, or one restarted empty). Sync: also passes on
  // each shard's step, as its notices do.
  std::string ProbeShards() {
    std::vector<ShardStatus> probed;
    for (int k = 0; k < ps_.num_shards(); ++k) {
      auto status = ps_.GetShardStatus(k, Clock::now() + kShardProbePatience);
      if (!status.ok())
        return "ps:" + std::to_string(k) + " is down: " + status.status().ToString();
      probed.push_back(*status);
      if (!status->store.initialized) {
        return "ps:" + std::to_string(k) + " restarted without its variables";
      }
      // Sync: step notices are fire-and-forget; one lost (e.g. while the
      // chief restarted) would stall the step for good. The probe repairs it.
      if (sync_ && status->store.sync_step > 0) sync_->ShardApplied(k, status->store.sync_step - 1);
    }
    probed_ = std::move(probed);
    return "";
  }

  Status EvaluateAndRecord(int64_t step) {
    PST_ASSIGN_OR_RETURN(Evaluation e, EvaluateCluster(step));
    LOG(INFO) << "step " << step << ": test accuracy " << e.accuracy << ", test loss " << e.loss;
    last_test_accuracy_ = e.accuracy;
    return WriteMetrics(step, e, Seconds(start_));
  }

  // A ps that dies can fail any request before the probe notices it: such
  // failures (deadline, unavailable, not initialized) lead to Recover();
  // other errors are returned.
  Status RecoverIfPsFailed(const Status& status) {
    const Code c = status.code();
    if (c != Code::kDeadlineExceeded && c != Code::kUnavailable && c != Code::kFailedPrecondition) {
      return status;
    }
    return Recover(status.ToString());
  }

  // Pauses training until every ps answers, then starts the whole cluster
  // again from the newest checkpoint (from scratch without one): every
  // shard goes back to the same step, so the model stays consistent.
  Status Recover(const std::string& why) {
    LOG(WARNING) << "pausing training: " << why;
    PST_RETURN_IF_ERROR(WaitForShards(ps_, options_.cluster, options_.ps_wait_timeout_ms, *stop_));
    PST_RETURN_IF_ERROR(InitializeVariables());
    start_step_ = 0;
    PST_RETURN_IF_ERROR(RestoreNewestCheckpoint());
    schedule_.Restart(start_step_, Clock::now());
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

  // Probes the shards meanwhile: a ps that got SIGTERM serves on only while
  // the chief is in touch (ps/stop_policy.h).
  void WaitForWorkersToLeave() {
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
    auto next_probe = Clock::now() + kShardProbeInterval;
    while (!state_.AllJoinedWorkersLeft()) {
      if (Clock::now() >= deadline) {
        LOG(WARNING) << "not every worker said goodbye within "
                        "--rpc_timeout_ms; stopping anyway";
        return;
      }
      if (Clock::now() >= next_probe) {
        ProbeShards();
        next_probe = Clock::now() + kShardProbeInterval;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  Status Finish() {
    PST_ASSIGN_OR_RETURN(int64_t step, GlobalStep());
    PST_ASSIGN_OR_RETURN(ClusterCounts counts, CollectCounts());
    // Every worker has left, so every report is in. Without new ones (the
    // last line took them) the last line is repeated at the final step.
    const ReportWindow w = state_.TakeWindow();
    if (w.reports > 0 || last_window_.reports > 0) {
      PST_RETURN_IF_ERROR(LogTraining(step, w.reports > 0 ? w : last_window_, last_progress_));
    }
    PST_ASSIGN_OR_RETURN(Evaluation e, EvaluateCluster(step));
    PST_RETURN_IF_ERROR(WriteMetrics(step, e, training_seconds_));
    if (!options_.run_dir.empty()) {
      PST_RETURN_IF_ERROR(WriteModelFile(options_.run_dir + "/model.bin", job_, *model_, params_));
    }
    if (!options_.export_onnx.empty()) {
      PST_RETURN_IF_ERROR(WriteOnnxModel(options_.export_onnx, TrainedModelOf(job_, params_)));
    }
    // Training is over, evaluated and its model written, and the workers
    // are gone: a final checkpoint that fails now (a ps lost after the last
    // step) costs only a state to resume from. Failing the run for it would
    // get the chief restarted to wait for workers that left.
    if (checkpointer_ && !final_checkpoint_tried_ && step != schedule_.last_saved_step()) {
      if (Status saved = SaveFinalCheckpoint(step); !saved.ok()) {
        LOG(ERROR) << "the final checkpoint failed: " << saved.ToString()
                   << "; training is complete, the newest checkpoint is at step "
                   << schedule_.last_saved_step();
      }
    }
    ShutdownShards(std::chrono::milliseconds(options_.rpc_timeout_ms));
    if (last_validation_) Print("Validation-Accuracy: %.4f\n", last_validation_->accuracy);
    Print("Test-Accuracy: %.4f\n", e.accuracy);
    Print("Total Time: %.2fs\n", earlier_seconds_ + training_seconds_);
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
    // Finite but no better than where training began: it diverged.
    if (e.loss >= untrained_.loss) {
      return Diverged("the test loss at the end, " + std::to_string(e.loss) +
                      ", is no lower than the untrained model's, " +
                      std::to_string(untrained_.loss));
    }
    return Status::OK();
  }

  // SIGINT/SIGTERM during training (Slurm cancelling the job, Kubernetes
  // evicting the chief's pod): the workers leave first, so the checkpoint
  // holds every gradient applied and nothing changes while it is written
  // (the signal may have reached them too, mid-step); the progress is kept
  // for a job started again with the same --checkpoint_dir, then the ps are
  // stopped. The run did not finish, so it fails (Aborted) rather than
  // reporting success.
  Status StopOnSignal() {
    StopWorkers();
    const std::string saved =
        checkpointer_ ? SaveOnStop() : "without a checkpoint (no --checkpoint_dir)";
    ShutdownShards(std::chrono::milliseconds(1000));
    return Aborted("stopped by a signal " + saved);
  }

  // "after checkpointing at step N", or why not.
  std::string SaveOnStop() {
    const StatusOr<int64_t> step = GlobalStep();
    if (!step.ok()) return "without a checkpoint: " + step.status().ToString();
    if (*step == 0) return "without a checkpoint: no step was trained";
    if (*step != schedule_.last_saved_step()) {
      // Sync: SaveCheckpoint pauses every shard at one step and saves that.
      const std::optional<Clock::time_point> before = last_checkpoint_;
      if (Status s = SaveCheckpoint(*step); !s.ok()) return "without a checkpoint: " + s.ToString();
      if (schedule_.consecutive_failures() > 0) {
        return "without a checkpoint: saving it failed (see above)";
      }
      if (last_checkpoint_ == before) {  // postponed: the shards did not reach one step
        return "without a new checkpoint (see above); the newest is at step " +
               std::to_string(schedule_.last_saved_step());
      }
    }
    return "after checkpointing at step " + std::to_string(schedule_.last_saved_step());
  }

  // A run that cannot go on (diverged, no storage for checkpoints): the
  // workers learn it from their next request and leave (a worker whose ps
  // vanished would wait for them to come back), then the ps are stopped.
  void StopCluster() {
    StopWorkers();
    ShutdownShards(std::chrono::milliseconds(1000));
  }

  void StopWorkers() {
    state_.set_state(wire::ClusterState::Stopping);
    if (sync_) sync_->Close();
    WaitForWorkersToLeave();
  }

  const ChiefOptions& options_;
  zmq::context_t context_{1};
  std::unique_ptr<Model> model_;
  Dataset test_;
  Dataset validation_;  // empty without --validation_examples
  Job job_;             // what model.bin records (its data moved into test_, validation_)
  Evaluator evaluator_;
  Evaluator validation_evaluator_;
  std::optional<Evaluation> last_validation_;  // of the last evaluation
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
  ReportWindow last_window_;
  std::vector<ShardStatus> probed_;  // every shard's, from the last probe that reached them all
  ProgressSnapshot last_progress_;
  std::optional<double> last_test_accuracy_;    // of the last evaluation, for the progress line
  double training_seconds_ = 0;                 // from opening training to the last step
  std::unique_ptr<Checkpointer> checkpointer_;  // null without --checkpoint_dir
  int64_t start_step_ = 0;                      // 0, or the restored checkpoint's
  CheckpointSchedule schedule_;
  bool final_checkpoint_tried_ = false;
  Evaluation untrained_;                     // the seeded initial model's, the bar for divergence
  double run_started_unix_ = 0;              // when the run first opened training
  double earlier_seconds_ = 0;               // of the run, before this chief opened training
  const std::atomic<bool>* stop_ = nullptr;  // set by a signal
  Clock::time_point next_too_few_notice_ = Clock::now();
  TrainingMetrics training_metrics_;                  // served by --metrics_port
  std::optional<Clock::time_point> last_checkpoint_;  // this chief's newest save
};

Status RunChiefUntil(const ChiefOptions& options, const std::atomic<bool>& stop) {
  if (!options.run_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.run_dir, error);
    if (error) return FileError("cannot create --run_dir=" + options.run_dir, error.value());
  }
  // Found unwritable now rather than after training.
  if (const auto folder = std::filesystem::path(options.export_onnx).parent_path();
      !folder.empty()) {
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error) return FileError("cannot create the folder of --export_onnx", error.value());
  }
  PST_ASSIGN_OR_RETURN(Job job, LoadJob(options.job, /*with_test=*/true));
  LOG(INFO) << "job: " << job.Describe() << "; " << job.data.train.size << " training, "
            << job.data.validation.size << " validation, " << job.data.test.size
            << " test examples";
  job.data.train = Dataset();  // the chief evaluates; it does not train
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                       MakeModel(job.model, job.input, job.num_classes));
  PlacementOptions placement_options = options.placement;
  placement_options.num_shards = static_cast<int>(options.cluster.ps.size());
  PST_ASSIGN_OR_RETURN(Placement placement,
                       Placement::Compute(WithGlobalStep(model->variables()), placement_options));
  PST_ASSIGN_OR_RETURN(
      std::unique_ptr<MetricsWriter> metrics,
      MetricsWriter::Open(options.run_dir.empty() ? "" : options.run_dir + "/metrics.jsonl"));
  // A restarted chief keeps the id its ps tasks and workers already use.
  uint64_t cluster_id = options.cluster_id;
  if (cluster_id == 0 && !options.checkpoint_dir.empty()) {
    cluster_id = KeptClusterId(options.checkpoint_dir);
    if (cluster_id) LOG(INFO) << "keeping cluster id " << cluster_id << " of this checkpoint_dir";
  }
  if (cluster_id == 0) cluster_id = NewClusterId();
  if (!options.checkpoint_dir.empty()) {
    PST_RETURN_IF_ERROR(KeepClusterId(options.checkpoint_dir, cluster_id));
  }
  Chief chief(options, std::move(model), std::move(placement), std::move(job), std::move(metrics),
              cluster_id);
  return chief.Run(stop);
}

}  // namespace

int ChiefExitCode(const Status& status, int stop_signal) {
  if (status.ok()) return 0;
  return stop_signal ? 128 + stop_signal : 1;
}

Status RunChief(const ChiefOptions& options, int* stop_signal) {
  std::atomic<bool> stop{false};
  std::atomic<int> signal_number{0};
  StopSignals stop_signals;
  SignalWatcher signals([&stop, &signal_number, &stop_signals](int signal) {
    switch (stop_signals.OnSignal(StopSignals::Clock::now())) {
      case StopSignals::Meaning::kGracefulStop:
        LOG(WARNING) << "signal " << signal << ": stopping (a second signal exits at once)";
        signal_number.store(signal);
        stop.store(true);
        return;
      case StopSignals::Meaning::kSameRequest: return;
      case StopSignals::Meaning::kStopNow:
        // The graceful stop waits on the ps and the workers; whoever signals
        // again does not want to wait.
        LOG(ERROR) << "signal " << signal << " again: exiting at once";
        std::_Exit(128 + signal);
    }
  });
  const Status status = RunChiefUntil(options, stop);
  if (stop_signal) *stop_signal = signal_number.load();
  return status;
}

}  // namespace pst
