// ChiefReporter: what the chief tells people and tools about the run. On
// stdout: the Step lines, the progress line and the final report; in
// --run_dir: metrics.jsonl; in --logdir: TensorBoard events; on
// --metrics_port: the Prometheus gauges. It decides nothing: the timeline
// says what to report and when. It keeps the figures later lines repeat
// (the last training loss, report window and test accuracy). A scheduled
// learning rate (--lr_schedule, --lr_warmup_steps) it computes from the
// global step (and a plateau's k), as the ps do, and shows everywhere; a
// constant one only on the gauges (it is --learning_rate throughout).
//
// Ownership: owns the metrics file and the event file; borrows the options,
// the chief state, `out` (where the lines go: stdout, or a test's file) and
// the plateau (null for another schedule), which must outlive it. The
// endpoint it starts reads the gauges, so it must not outlive the reporter.
// Thread safety: none, but for the gauges, which the endpoint's thread reads.
#ifndef PST_CHIEF_CHIEF_REPORTER_H_
#define PST_CHIEF_CHIEF_REPORTER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "chief/chief_options.h"
#include "chief/chief_state.h"
#include "chief/cluster_counts.h"
#include "chief/lr_plateau.h"
#include "chief/reporting/evaluator.h"
#include "chief/reporting/event_writer.h"
#include "chief/reporting/metrics_writer.h"
#include "chief/reporting/progress.h"
#include "chief/reporting/progress_line.h"
#include "chief/streaming/file_dispatcher.h"
#include "common/clock.h"
#include "common/status.h"
#include "monitoring/metrics_http_server.h"
#include "monitoring/training_metrics.h"
#include "scheduler/progressive_window.h"

namespace pst {

class ChiefReporter {
 public:
  ChiefReporter(const ChiefOptions& options, const ChiefState* state,
                std::unique_ptr<MetricsWriter> metrics, std::FILE* out = stdout,
                const LrPlateau* lr_plateau = nullptr);

  // With --logdir: opens this run's TensorBoard events.
  Status OpenEvents();
  // With --metrics_port: serves the gauges on `address` (null without).
  StatusOr<std::unique_ptr<MetricsHttpServer>> StartEndpoint(const std::string& address);

  // What the endpoint serves, as of the timeline's newest look at global
  // step `step`: `elapsed` seconds of training since `start_step`;
  // `ps_promotions`: backups promoted so far (--ps_replicas).
  void PublishProgress(int64_t step, int64_t start_step, double elapsed,
                       double seconds_since_checkpoint, int checkpoint_failures,
                       int64_t ps_promotions = 0);
  // On time (or `final`) the progress line; none with progress_every_secs 0.
  void ShowProgress(MonotonicClock::TimePoint now, const ProgressSnapshot& progress, bool final);
  // Ends the progress line, so that what follows keeps it.
  void EndProgress() { line_.End(); }
  // The newest evaluation's, for the progress line.
  void set_test_accuracy(double accuracy) { last_test_accuracy_ = accuracy; }

  // One Step line and TensorBoard's training scalars for the workers'
  // reports in `w`. `staleness_mean`: from the shards' last probe.
  Status LogTraining(int64_t step, const ReportWindow& w, const ProgressSnapshot& progress,
                     double staleness_mean);
  // At the end, every report in: the Step line for the reports in `w`, or
  // the last line again at `step` when `w` has none (nothing when no report
  // ever came).
  Status LogLastTraining(int64_t step, const ReportWindow& w, const ProgressSnapshot& progress,
                         double staleness_mean);
  // An evaluation at `step`, after `elapsed` seconds of training since
  // `start_step`: a line of metrics.jsonl, TensorBoard's test scalars and
  // the gauges.
  Status RecordEvaluation(int64_t step, int64_t start_step, double elapsed, const Evaluation& test,
                          const std::optional<Evaluation>& validation, const ClusterCounts& c);
  // --follow: a file finished at global step `step`, with the window's
  // mean after it: a log line, a line of metrics.jsonl ("file": how many
  // files so far), TensorBoard's progressive scalars and the gauges.
  Status RecordStreamedFile(int64_t step, const StreamedFile& file, int64_t files, int64_t examples,
                            const FileScore& window);
  // The final report on stdout. `total_seconds`: of the whole run.
  // `test` and `validation` are of the model in model.bin; with a best
  // model kept (a validation set), `model_step` is its step.
  void PrintReport(int64_t step, const Evaluation& test,
                   const std::optional<Evaluation>& validation, double total_seconds,
                   const ClusterCounts& c, bool sync,
                   std::optional<int64_t> model_step = std::nullopt);

 private:
  // One log line per embedding table part: rows held, created, evicted,
  // refused (the ps' status replies in `c`).
  void LogTables(int64_t step, const ClusterCounts& c) const;
  // The rate of the update at global step `step`, when scheduled.
  std::optional<float> ScheduledRateAt(int64_t step) const;
  // One report line on `out_`, flushed.
  void Print(const char* format, ...) const __attribute__((format(printf, 2, 3)));

  const ChiefOptions& options_;
  const ChiefState* const state_;
  std::FILE* const out_;
  std::unique_ptr<MetricsWriter> metrics_;
  std::unique_ptr<EventWriter> events_;       // null without --logdir
  TrainingMetrics gauges_;                    // served by --metrics_port
  const std::optional<LrSchedule> schedule_;  // none with a constant rate
  const LrPlateau* const lr_plateau_;         // null unless --lr_schedule=plateau
  ProgressLine line_;
  double last_loss_ = 0;
  ReportWindow last_window_;
  std::optional<double> last_test_accuracy_;  // of the last evaluation, for the progress line
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_REPORTER_H_
