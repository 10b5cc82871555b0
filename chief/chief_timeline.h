// ChiefTimeline: the chief's run from training opened to its end. It follows
// the global step; writes Step lines and evaluates when the StepCadence says
// (with a validation set it keeps the best model, best_model.bin, stops
// early after --early_stopping_patience evaluations without a better one,
// and feeds --lr_schedule=plateau's decision the validation loss),
// saves checkpoints when their schedule says, and recovers the cluster when a
// ps is lost. At --train_steps it lets the workers leave, evaluates the final
// model, writes model.bin and the final checkpoint, stops the ps and prints
// the report. With a validation set, model.bin (and the ONNX export) is the
// best model, best_model.bin, when one was written, and the report gives
// its test figures and step (Model-Step); metrics.jsonl still has the
// final evaluation. On a signal it saves a checkpoint and stops every task; a run
// that cannot go on (diverged, no storage) stops them too.
//
// Time: its decisions (probes, the notices, how long to wait for the
// workers to leave) read `clock`; between two looks at the cluster it calls
// `pause`, which sleeps in a run and moves a FakeClock in a test.
//
// Ownership: borrows the options, the chief state, the sync coordinator
// (null in async mode), the shard keeper, the checkpoints, the reporter, the
// evaluator, the stop flag (set by a signal), the clock and the plateau
// (null for another schedule); each must outlive it.
// Thread safety: none; the chief's main thread.
#ifndef PST_CHIEF_CHIEF_TIMELINE_H_
#define PST_CHIEF_CHIEF_TIMELINE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "chief/chief_checkpoints.h"
#include "chief/chief_options.h"
#include "chief/chief_reporter.h"
#include "chief/chief_state.h"
#include "chief/cluster_counts.h"
#include "chief/export/model_exporter.h"
#include "chief/lr_plateau.h"
#include "chief/reporting/cluster_evaluator.h"
#include "chief/reporting/progress.h"
#include "chief/shard_keeper.h"
#include "chief/streaming/file_dispatcher.h"
#include "chief/sync/sync_coordinator.h"
#include "common/clock.h"
#include "common/status.h"
#include "scheduler/best_model_keeper.h"
#include "scheduler/progressive_window.h"
#include "scheduler/step_cadence.h"
#include "scheduler/worker_absence.h"

namespace pst {

class ChiefTimeline {
 public:
  // Waits `duration` between two looks at the cluster.
  using Pause = std::function<void(MonotonicClock::Duration duration)>;
  // Between two looks at the global step (or at the workers leaving).
  static constexpr std::chrono::milliseconds kLookInterval{20};
  // --follow: the files progressive validation's window averages over.
  static constexpr int kProgressiveWindowFiles = 10;

  ChiefTimeline(const ChiefOptions& options, ChiefState& state, SyncCoordinator* sync,
                ShardKeeper& keeper, ChiefCheckpoints& checkpoints, ChiefReporter& reporter,
                ClusterEvaluator& evaluator, const std::atomic<bool>& stop,
                const MonotonicClock& clock, Pause pause, LrPlateau* lr_plateau = nullptr,
                FileDispatcher* files = nullptr, ModelExporter* exporter = nullptr);

  // Training opened at `opened`, at global step `start_step`;
  // `earlier_seconds`: of the run, before this chief opened training. OK
  // once trained to --train_steps and every task stopped; Aborted for a
  // signal (naming the step saved) or a run that cannot go on.
  Status Run(int64_t start_step, MonotonicClock::TimePoint opened, double earlier_seconds);

 private:
  Status FollowTraining();
  // --follow: records the files the workers finished since the last look.
  Status RecordStreamedFiles(int64_t step);
  // Diverged for a non-finite loss, Aborted when the workers stayed away
  // too long (WorkerAbsence); else OK.
  Status CheckRunHealthy(int64_t step, MonotonicClock::TimePoint now);
  // The Step line of `step`, when `cadence` says it is due.
  Status LogIfDue(StepCadence& cadence, int64_t step);
  Status Finish();
  Status FinishThroughPsFailures();
  // model.bin into --run_dir and the ONNX export, at the end of training.
  Status WriteTrainedModel();
  // The model of the last evaluation, with a click model's tables whole;
  // nullopt for dynamic tables on replicated shards, which are not listed
  // (they live in the checkpoints only).
  StatusOr<std::optional<TrainedModel>> TrainedModelNow();
  // Feeds the last evaluation's validation score (if any) to `best_`;
  // writes best_model.bin on a new best, and keeps `test` as its figures.
  StatusOr<EvaluationVerdict> KeepBestModel(int64_t step, const Evaluation& test);
  Status EvaluateAndRecord(int64_t step);
  // `elapsed`: seconds of training so far.
  Status RecordEvaluation(int64_t step, const Evaluation& e, double elapsed);
  StatusOr<ClusterCounts> CollectCounts();
  // From the shards' last probe (at most a probe interval old).
  double ProbedStaleness() const;
  // A request that failed for a lost ps leads to Recover(); other errors
  // are returned.
  // Async, at the end: true once the final checkpoint can be taken (see
  // the .cc). `end_reached`: when the end was first seen (set here).
  bool AsyncPushesSettled(MonotonicClock::TimePoint now,
                          std::optional<MonotonicClock::TimePoint>* end_reached);
  Status RecoverIfPsFailed(const Status& status);
  Status Recover(const std::string& why);
  void SayIfTooFewWorkers();
  Status StopOnSignal();
  void StopCluster();
  void StopWorkers();
  void WaitForWorkersToLeave();
  // Then, for ChiefOptions::late_worker_grace, for workers never heard from.
  void WaitForLateWorkers();
  int num_workers() const { return static_cast<int>(options_.cluster.workers.size()); }
  // Seconds from `since` to now.
  double SecondsSince(MonotonicClock::TimePoint since) const;

  const ChiefOptions& options_;
  ChiefState& state_;
  SyncCoordinator* const sync_;
  ShardKeeper& keeper_;
  ChiefCheckpoints& checkpoints_;
  ChiefReporter& reporter_;
  ClusterEvaluator& evaluator_;
  const std::atomic<bool>& stop_;
  const MonotonicClock& clock_;
  const Pause pause_;
  LrPlateau* const lr_plateau_;
  FileDispatcher* const files_;    // null unless --follow
  ModelExporter* const exporter_;  // null unless --export_every_secs
  ProgressiveWindow progressive_{kProgressiveWindowFiles};
  int64_t streamed_files_ = 0, streamed_examples_ = 0;
  int64_t start_step_ = 0;  // where training opened, or resumed after a recovery
  MonotonicClock::TimePoint start_;
  double earlier_seconds_ = 0;   // of the run, before this chief opened training
  double training_seconds_ = 0;  // from opening training to the last step
  ProgressSnapshot last_progress_;
  MonotonicClock::TimePoint next_too_few_notice_;
  WorkerAbsence absence_;
  BestModelKeeper best_;
  bool stopped_early_ = false;
  int64_t last_kept_step_ = -1;  // of the last evaluation KeepBestModel saw
  // The model in best_model.bin, once one is written.
  struct KeptModel {
    int64_t step = 0;
    Evaluation test;
    std::optional<Evaluation> validation;
  };
  std::optional<KeptModel> kept_;
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_TIMELINE_H_
