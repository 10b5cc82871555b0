#include "chief/chief_timeline.h"

#include <utility>

#include "common/clock.h"
#include "export/onnx_export.h"
#include "job/model_file.h"

namespace pst {
namespace {

// Long enough to smooth evaluations and checkpoints out of the ETA, short
// enough to follow a change of pace (a worker lost or back).
constexpr std::chrono::seconds kProgressWindow{20};

}  // namespace

ChiefTimeline::ChiefTimeline(const ChiefOptions& options, ChiefState& state, SyncCoordinator* sync,
                             ShardKeeper& keeper, ChiefCheckpoints& checkpoints,
                             ChiefReporter& reporter, ClusterEvaluator& evaluator,
                             const std::atomic<bool>& stop, const MonotonicClock& clock,
                             Pause pause, LrPlateau* lr_plateau, FileDispatcher* files,
                             ModelExporter* exporter)
    : options_(options),
      state_(state),
      sync_(sync),
      keeper_(keeper),
      checkpoints_(checkpoints),
      reporter_(reporter),
      evaluator_(evaluator),
      stop_(stop),
      clock_(clock),
      pause_(std::move(pause)),
      lr_plateau_(lr_plateau),
      files_(files),
      exporter_(exporter),
      next_too_few_notice_(clock.Now()),
      absence_(std::chrono::milliseconds(options.join_timeout_ms)),
      best_(BestModelOptions{"validation score", /*higher_is_better=*/true,
                             options.early_stopping_patience}) {}

double ChiefTimeline::SecondsSince(MonotonicClock::TimePoint since) const {
  return std::chrono::duration<double>(clock_.Now() - since).count();
}

Status ChiefTimeline::Run(int64_t start_step, MonotonicClock::TimePoint opened,
                          double earlier_seconds) {
  start_step_ = start_step;
  start_ = opened;
  earlier_seconds_ = earlier_seconds;
  if (Status trained = FollowTraining(); !trained.ok()) {
    if (trained.code() == Code::kAborted) StopCluster();
    return trained;
  }
  training_seconds_ = SecondsSince(start_);
  // A stream never reaches an end of its own: with --follow a signal is
  // how a run ends, and it ends as any run does, written and reported.
  if (stop_.load() && files_ == nullptr) return StopOnSignal();
  if (stop_.load()) LOG(INFO) << "--follow: stopping the stream on a signal; finishing the run";
  StopWorkers();
  WaitForLateWorkers();
  return FinishThroughPsFailures();
}

// A ps that stalls or is lost while the run is being finished (evaluated,
// written, checkpointed) is recovered like one lost in training, and Finish
// runs again, as long as the cluster still holds the finished run (a stall,
// or a restore of the final checkpoint). A loss that rolls the run back
// cannot be trained again here: the workers have left.
Status ChiefTimeline::FinishThroughPsFailures() {
  while (true) {
    const Status finished = Finish();
    if (!IsPsFailure(finished) || stop_.load()) return finished;
    PST_RETURN_IF_ERROR(Recover(finished.ToString()));
    if (sync_) sync_->Close();  // a restore reopens it; nobody is left to train
    if (start_step_ < options_.train_steps) {
      return Aborted(
          "a ps was lost while the run was being finished, and the cluster went back "
          "to global step " +
          std::to_string(start_step_) +
          ", below --train_steps, after the workers left: start the job again with "
          "the same --checkpoint_dir to train the rest");
    }
  }
}

Status ChiefTimeline::FollowTraining() {
  Progress progress(options_.train_steps == kUntilStopped ? 0 : options_.train_steps, start_,
                    kProgressWindow);
  StepCadence cadence(options_.log_every_steps, options_.eval_every_steps, options_.train_steps,
                      start_step_);
  int64_t step = start_step_;
  bool final_save_tried = false;
  bool final_cut_ready = false;  // async: see AsyncPushesSettled
  std::optional<MonotonicClock::TimePoint> end_reached;
  auto next_probe = clock_.Now();
  while (!stop_.load()) {
    std::string trouble;
    if (clock_.Now() >= next_probe) {
      next_probe = clock_.Now() + ShardKeeper::kProbeInterval;
      trouble = keeper_.Probe();
    }
    StatusOr<int64_t> current = trouble.empty() ? keeper_.GlobalStep() : StatusOr<int64_t>(0);
    if (!current.ok()) trouble = current.status().message();
    if (!trouble.empty()) {
      PST_RETURN_IF_ERROR(Recover(trouble));
      continue;
    }
    step = *current;
    cadence.Observe(step);
    reporter_.PublishProgress(step, start_step_, SecondsSince(start_),
                              checkpoints_.seconds_since_checkpoint(),
                              checkpoints_.consecutive_failures(), keeper_.promotions());
    const auto now = clock_.Now();
    progress.Observe(now, step, state_.total_examples());
    PST_RETURN_IF_ERROR(CheckRunHealthy(step, now));
    last_progress_ = progress.Snapshot();
    PST_RETURN_IF_ERROR(LogIfDue(cadence, step));
    PST_RETURN_IF_ERROR(RecordStreamedFiles(step));
    const bool done = step >= options_.train_steps;
    if (!done) {
      final_save_tried = final_cut_ready = false;
      end_reached.reset();
    }
    reporter_.ShowProgress(now, last_progress_, done);
    if (done) {
      // The workers wait for the final checkpoint (sync: SyncCoordinator;
      // async: WorkerTask holds them until the chief stops), so a ps lost
      // before it is saved is recovered like any other, and the steps rolled
      // back are trained again.
      // Once per arrival at the end: a save that failed for good is logged
      // by SaveFinal and not retried.
      if (checkpoints_.enabled() && step != checkpoints_.last_saved_step() && !final_save_tried) {
        if (!sync_ && !final_cut_ready) {
          final_cut_ready = AsyncPushesSettled(now, &end_reached);
          if (!final_cut_ready) pause_(kLookInterval);
          continue;  // reads the step again: the last pushes may have moved it
        }
        final_save_tried = true;
        PST_RETURN_IF_ERROR(RecoverIfPsFailed(checkpoints_.SaveFinal(step)));
        continue;  // the next look ends the run, or trains the rolled-back steps
      }
      reporter_.EndProgress();
      break;
    }
    if (cadence.EvalDue(step)) {
      PST_RETURN_IF_ERROR(RecoverIfPsFailed(EvaluateAndRecord(step)));
      cadence.Evaluated(step);
      if (stopped_early_) {
        reporter_.EndProgress();
        break;
      }
    }
    if (checkpoints_.Due(step)) {
      PST_RETURN_IF_ERROR(RecoverIfPsFailed(checkpoints_.Save(step)));
    }
    if (exporter_) PST_RETURN_IF_ERROR(RecoverIfPsFailed(exporter_->ExportIfDue(step)));
    pause_(kLookInterval);
  }
  reporter_.EndProgress();  // a warning that follows keeps the last progress line
  if (stop_.load()) LOG(WARNING) << "interrupted at global step " << step;
  return Status::OK();
}

Status ChiefTimeline::RecordStreamedFiles(int64_t step) {
  if (files_ == nullptr) return Status::OK();
  const std::vector<StreamedFile> finished = files_->TakeFinished();
  for (const StreamedFile& file : finished) {
    if (file.error.empty() && file.examples == 0) continue;  // the shards held it already
    if (file.error.empty()) {
      progressive_.Add(FileScore{file.examples, file.auc, file.log_loss});
      ++streamed_files_;
      streamed_examples_ += file.examples;
    }
    PST_RETURN_IF_ERROR(reporter_.RecordStreamedFile(step, file, streamed_files_,
                                                     streamed_examples_, progressive_.Mean()));
  }
  const FileDispatcher::Counts counts = files_->counts();
  if (!finished.empty() && counts.waiting == 0 && counts.held == 0) {
    LOG(INFO) << "stream caught up: " << counts.found
              << " files found, every one trained; waiting for more";
  }
  return Status::OK();
}

Status ChiefTimeline::CheckRunHealthy(int64_t step, MonotonicClock::TimePoint now) {
  if (const std::string bad = state_.non_finite_loss(); !bad.empty()) {
    return Diverged(bad + " (global step " + std::to_string(step) + ")");
  }
  // At the end the workers leave: nothing to wait for.
  if (step < options_.train_steps) {
    SayIfTooFewWorkers();
    const bool present = !state_.EveryWorkerDone();
    if (auto why = absence_.Observe(now, present, step, options_.train_steps)) {
      return Aborted(*why);
    }
  }
  return Status::OK();
}

// The last steps' line waits for Finish: their reports may still be on
// their way when the global step reaches --train_steps (StepCadence).
Status ChiefTimeline::LogIfDue(StepCadence& cadence, int64_t step) {
  if (!cadence.LogDue(step)) return Status::OK();
  if (const ReportWindow w = state_.TakeWindow(); w.reports > 0) {
    PST_RETURN_IF_ERROR(
        RecoverIfPsFailed(reporter_.LogTraining(step, w, last_progress_, ProbedStaleness())));
  }
  cadence.Logged(step);
  return Status::OK();
}

Status ChiefTimeline::Finish() {
  PST_ASSIGN_OR_RETURN(int64_t step, keeper_.GlobalStep());
  PST_ASSIGN_OR_RETURN(ClusterCounts counts, CollectCounts());
  // Every worker has left, so every report is in.
  PST_RETURN_IF_ERROR(
      reporter_.LogLastTraining(step, state_.TakeWindow(), last_progress_, ProbedStaleness()));
  PST_ASSIGN_OR_RETURN(Evaluation e, evaluator_.Evaluate(step));
  PST_RETURN_IF_ERROR(RecordEvaluation(step, e, training_seconds_));
  PST_RETURN_IF_ERROR(KeepBestModel(step, e).status());
  PST_RETURN_IF_ERROR(WriteTrainedModel());
  if (exporter_) PST_RETURN_IF_ERROR(exporter_->ExportIfDue(step, /*final=*/true));
  checkpoints_.SaveAfterTraining(step);
  keeper_.Shutdown(std::chrono::milliseconds(options_.rpc_timeout_ms));
  // The report is of the model model.bin holds.
  reporter_.PrintReport(step, kept_ ? kept_->test : e,
                        kept_ ? kept_->validation : evaluator_.last_validation(),
                        earlier_seconds_ + training_seconds_, counts, sync_ != nullptr,
                        kept_ ? std::optional<int64_t>(kept_->step) : std::nullopt);
  return evaluator_.CheckLearned(e);
}

StatusOr<std::optional<TrainedModel>> ChiefTimeline::TrainedModelNow() {
  const Job& job = evaluator_.job();
  std::vector<Tensor> params = evaluator_.params();
  DynamicTables dynamic;
  if (job.click_model) {
    // Its tables live on the ps, by row, and are written whole.
    if (job.table_rows == 0 && options_.ps_replicas > 1) {
      LOG(WARNING) << "dynamic embedding tables on replicated shards are not written to a "
                      "model file: their rows are in the checkpoints of --checkpoint_dir";
      return std::optional<TrainedModel>();
    }
    PST_ASSIGN_OR_RETURN(std::vector<Tensor> tables, evaluator_.PullWholeTables(&dynamic));
    params.insert(params.end(), std::make_move_iterator(tables.begin()),
                  std::make_move_iterator(tables.end()));
  }
  return std::optional<TrainedModel>(TrainedModelOf(job, std::move(params), std::move(dynamic)));
}

Status ChiefTimeline::WriteTrainedModel() {
  if (options_.run_dir.empty() && options_.export_onnx.empty()) return Status::OK();
  if (kept_) {
    const std::string best = options_.run_dir + "/best_model.bin";
    PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(best));
    LOG(INFO) << "model.bin is the best model, of step " << kept_->step;
    // Its figures as written: a click model's tables were pulled whole after
    // its evaluation, while async workers still pushed.
    PST_ASSIGN_OR_RETURN(ClusterEvaluator::Figures figures, evaluator_.EvaluateWritten(trained));
    kept_->test = figures.test;
    kept_->validation = figures.validation;
    PST_RETURN_IF_ERROR(WriteModelFile(options_.run_dir + "/model.bin", evaluator_.job(),
                                       evaluator_.model(), trained.params, trained.dynamic));
    if (!options_.export_onnx.empty()) {
      PST_RETURN_IF_ERROR(WriteOnnxModel(options_.export_onnx, trained));
    }
    return Status::OK();
  }
  PST_ASSIGN_OR_RETURN(std::optional<TrainedModel> trained, TrainedModelNow());
  if (!trained) return Status::OK();
  if (!options_.run_dir.empty()) {
    PST_RETURN_IF_ERROR(WriteModelFile(options_.run_dir + "/model.bin", evaluator_.job(),
                                       evaluator_.model(), trained->params, trained->dynamic));
  }
  if (!options_.export_onnx.empty()) {
    PST_RETURN_IF_ERROR(WriteOnnxModel(options_.export_onnx, *trained));
  }
  return Status::OK();
}

// Accuracy for classifiers, AUC for click models: higher is better for both.
StatusOr<EvaluationVerdict> ChiefTimeline::KeepBestModel(int64_t step, const Evaluation& test) {
  const std::optional<Evaluation>& validation = evaluator_.last_validation();
  // The final evaluation of a run stopped early is of the step just kept.
  if (!validation || step == last_kept_step_) return EvaluationVerdict();
  last_kept_step_ = step;
  const double score = validation->binary() ? validation->auc : validation->accuracy;
  const EvaluationVerdict verdict = best_.Observe(step, score);
  if (verdict.new_best && !options_.run_dir.empty()) {
    PST_ASSIGN_OR_RETURN(std::optional<TrainedModel> trained, TrainedModelNow());
    if (trained) {
      PST_RETURN_IF_ERROR(WriteModelFile(options_.run_dir + "/best_model.bin", evaluator_.job(),
                                         evaluator_.model(), trained->params, trained->dynamic));
      LOG(INFO) << "step " << step << ": best validation score so far, " << score
                << ": written to best_model.bin";
      kept_ = KeptModel{step, test, validation};
    }
  }
  return verdict;
}

Status ChiefTimeline::EvaluateAndRecord(int64_t step) {
  PST_ASSIGN_OR_RETURN(Evaluation e, evaluator_.Evaluate(step));
  LOG(INFO) << "step " << step << ": test accuracy " << e.accuracy << ", test loss " << e.loss;
  reporter_.set_test_accuracy(e.accuracy);
  PST_RETURN_IF_ERROR(RecordEvaluation(step, e, SecondsSince(start_)));
  PST_ASSIGN_OR_RETURN(const EvaluationVerdict verdict, KeepBestModel(step, e));
  if (verdict.stop) LOG(WARNING) << verdict.stop_message;
  stopped_early_ = verdict.stop;
  // The rate of the steps still to come; none come after an early stop.
  const std::optional<Evaluation>& validation = evaluator_.last_validation();
  if (lr_plateau_ && validation && !stopped_early_) {
    return lr_plateau_->Observe(step, validation->loss, keeper_.deadline());
  }
  return Status::OK();
}

Status ChiefTimeline::RecordEvaluation(int64_t step, const Evaluation& e, double elapsed) {
  PST_ASSIGN_OR_RETURN(ClusterCounts c, CollectCounts());
  return reporter_.RecordEvaluation(step, start_step_, elapsed, e, evaluator_.last_validation(), c);
}

StatusOr<ClusterCounts> ChiefTimeline::CollectCounts() {
  PST_ASSIGN_OR_RETURN(std::vector<ShardStatus> shards, keeper_.Statuses());
  return CountsOf(std::move(shards), num_workers(), sync_ != nullptr);
}

double ChiefTimeline::ProbedStaleness() const {
  return CountsOf(keeper_.probed(), num_workers(), sync_ != nullptr).staleness_mean();
}

// Async: a push on its way as the global step passed --train_steps lands on
// each shard at its own time, so a checkpoint taken then could count it on
// one shard and not on another. A worker reports holding at the end only
// once its last push is acknowledged, so the final checkpoint waits for
// every live worker to report that, for at most --rpc_timeout_ms.
bool ChiefTimeline::AsyncPushesSettled(MonotonicClock::TimePoint now,
                                       std::optional<MonotonicClock::TimePoint>* end_reached) {
  if (!*end_reached) *end_reached = now;
  const std::vector<int> short_of = state_.WorkersShortOf(options_.train_steps);
  if (short_of.empty()) return true;
  if (now - **end_reached < std::chrono::milliseconds(options_.rpc_timeout_ms)) return false;
  LOG(WARNING) << "worker:" << short_of.front() << " has not reported reaching --train_steps "
               << "within --rpc_timeout_ms: the final checkpoint may miss its last push on some "
                  "shards";
  return true;
}

Status ChiefTimeline::RecoverIfPsFailed(const Status& status) {
  if (!IsPsFailure(status)) return status;
  return Recover(status.ToString());
}

Status ChiefTimeline::Recover(const std::string& why) {
  PST_ASSIGN_OR_RETURN(start_step_, keeper_.Recover(why));
  state_.ForgetReportedSteps();
  if (files_ != nullptr) files_->Reopen();
  if (exporter_ != nullptr) exporter_->RolledBack(start_step_);
  checkpoints_.Restart(start_step_, clock_.Now());
  return Status::OK();
}

// Sync: steps need N live workers; below that the cluster waits for workers
// to come back, and says so once per heartbeat interval.
void ChiefTimeline::SayIfTooFewWorkers() {
  if (!sync_ || clock_.Now() < next_too_few_notice_) return;
  const int live = state_.live_workers();
  const int needed = sync_->quorum();
  if (live >= needed || SecondsSince(start_) * 1000 < options_.heartbeat_timeout_ms) return;
  LOG(WARNING) << "waiting: " << live << " live workers, each step needs " << needed;
  next_too_few_notice_ = clock_.Now() + std::chrono::milliseconds(options_.heartbeat_timeout_ms);
}

// SIGINT/SIGTERM during training (Slurm cancelling the job, Kubernetes
// evicting the chief's pod): the workers leave first, so the checkpoint holds
// every gradient applied and nothing changes while it is written (the signal
// may have reached them too, mid-step); the progress is kept for a job
// started again with the same --checkpoint_dir, then the ps are stopped. The
// run did not finish, so it fails (Aborted) rather than reporting success.
// Workers never heard from are not waited for: the job is going away, and
// the launcher's grace before SIGKILL is for the checkpoint.
Status ChiefTimeline::StopOnSignal() {
  StopWorkers();
  const std::string saved = checkpoints_.SaveOnStop();
  keeper_.Shutdown(std::chrono::milliseconds(1000));
  return Aborted("stopped by a signal " + saved);
}

// A run that cannot go on (diverged, no storage for checkpoints): the
// workers learn it from their next request and leave (a worker whose ps
// vanished would wait for them to come back), then the ps are stopped.
void ChiefTimeline::StopCluster() {
  StopWorkers();
  WaitForLateWorkers();
  keeper_.Shutdown(std::chrono::milliseconds(1000));
}

void ChiefTimeline::StopWorkers() {
  state_.set_state(wire::ClusterState::Stopping);
  if (sync_) sync_->Close();
  WaitForWorkersToLeave();
}

// Probes the shards meanwhile: a ps that got SIGTERM serves on only while
// the chief is in touch (ps/stop_policy.h).
void ChiefTimeline::WaitForWorkersToLeave() {
  // After the window in which a restarted chief waits for the workers of the
  // run before it to speak (ChiefState::AwaitEarlierWorkersFor), if any.
  const auto deadline = clock_.Now() + options_.earlier_workers_window() +
                        std::chrono::milliseconds(options_.rpc_timeout_ms);
  auto next_probe = clock_.Now() + ShardKeeper::kProbeInterval;
  while (!state_.EveryWorkerDone()) {
    if (clock_.Now() >= deadline) {
      LOG(WARNING) << "not every worker said goodbye within "
                      "--rpc_timeout_ms; stopping anyway";
      return;
    }
    if (clock_.Now() >= next_probe) {
      keeper_.Probe();
      next_probe = clock_.Now() + ShardKeeper::kProbeInterval;
    }
    pause_(kLookInterval);
  }
}

void ChiefTimeline::WaitForLateWorkers() {
  if (state_.EveryWorkerHeardFrom()) return;
  LOG(INFO) << "training is over; waiting up to " << options_.late_worker_grace().count()
            << " ms for the workers never heard from, to tell them";
  const auto deadline = clock_.Now() + options_.late_worker_grace();
  while (!state_.EveryWorkerHeardFrom() || !state_.EveryWorkerDone()) {
    if (clock_.Now() >= deadline) {
      LOG(WARNING) << "a worker never spoke to this chief; stopping without it";
      return;
    }
    pause_(kLookInterval);
  }
}

}  // namespace pst
