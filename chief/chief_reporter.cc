#include "chief/chief_reporter.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace pst {
namespace {

// metrics.jsonl's format (docs/FORMATS.md).
constexpr int kMetricsFormatVersion = 1;

double PerSecond(double count, double elapsed) { return elapsed > 0 ? count / elapsed : 0; }

// The schedule the reports show: none for a constant rate without warm-up.
std::optional<LrSchedule> ShownSchedule(const ShardConfig& shard) {
  if (shard.lr_schedule == "constant" && shard.lr_warmup_steps == 0) return std::nullopt;
  StatusOr<LrSchedule> schedule = LrScheduleOf(shard);
  CHECK(schedule.ok()) << "the flags let a bad schedule through: " << schedule.status().ToString();
  return *schedule;
}

}  // namespace

ChiefReporter::ChiefReporter(const ChiefOptions& options, const ChiefState* state,
                             std::unique_ptr<MetricsWriter> metrics, std::FILE* out,
                             const LrPlateau* lr_plateau)
    : options_(options),
      state_(state),
      out_(out),
      metrics_(std::move(metrics)),
      schedule_(ShownSchedule(options.shard)),
      lr_plateau_(lr_plateau),
      line_(out, isatty(fileno(out)) == 1,
            std::chrono::duration_cast<MonotonicClock::Duration>(
                std::chrono::duration<double>(options.progress_every_secs))) {}

Status ChiefReporter::OpenEvents() {
  if (options_.logdir.empty()) return Status::OK();
  PST_ASSIGN_OR_RETURN(events_, EventWriter::Open(RunEventDir(options_.logdir, options_.run_dir)));
  LOG(INFO) << "TensorBoard events: " << events_->path();
  return Status::OK();
}

StatusOr<std::unique_ptr<MetricsHttpServer>> ChiefReporter::StartEndpoint(
    const std::string& address) {
  if (options_.metrics_port == 0) return std::unique_ptr<MetricsHttpServer>();
  MetricsHttpServerOptions o;
  o.host = address;
  o.port = options_.metrics_port;
  auto endpoint = std::make_unique<MetricsHttpServer>(o, [this] { return gauges_.Text(); });
  PST_RETURN_IF_ERROR(endpoint->Start());
  LOG(INFO) << "metrics on http://" << o.host << ":" << endpoint->port() << "/metrics";
  return endpoint;
}

void ChiefReporter::PublishProgress(int64_t step, int64_t start_step, double elapsed,
                                    double seconds_since_checkpoint, int checkpoint_failures,
                                    int64_t ps_promotions) {
  gauges_.Update([&](TrainingSnapshot& s) {
    s.global_step = step;
    s.train_steps = options_.train_steps;
    s.steps_per_second = PerSecond(step - start_step, elapsed);
    s.examples_per_second = PerSecond(state_->total_examples(), elapsed);
    s.train_loss = last_loss_;
    s.learning_rate = ScheduledRateAt(step).value_or(options_.shard.optimizer.learning_rate);
    s.live_workers = state_->live_workers();
    s.live_ps = state_->live_ps();
    s.task_deaths = state_->deaths();
    s.ps_promotions = ps_promotions;
    s.seconds_since_checkpoint = seconds_since_checkpoint;
    s.consecutive_checkpoint_failures = checkpoint_failures;
  });
}

void ChiefReporter::ShowProgress(MonotonicClock::TimePoint now, const ProgressSnapshot& progress,
                                 bool final) {
  if (options_.progress_every_secs > 0 && (final || line_.Due(now))) {
    line_.Show(now, FormatProgress(progress, last_loss_, last_test_accuracy_,
                                   ScheduledRateAt(progress.step)));
  }
}

std::optional<float> ChiefReporter::ScheduledRateAt(int64_t step) const {
  if (!schedule_) return std::nullopt;
  if (lr_plateau_) return lr_plateau_->RateAt(step);
  return schedule_->RateAt(std::max<int64_t>(step, 0));
}

// TensorBoard plots training every --log_every_steps, not only at the
// evaluations. Steps/s over the progress window, as the progress line shows
// it; the staleness from the shards' last probe: asking every shard again
// at each log step would cost more.
Status ChiefReporter::LogTraining(int64_t step, const ReportWindow& w,
                                  const ProgressSnapshot& progress, double staleness_mean) {
  line_.Clear();
  last_window_ = w;
  last_loss_ = w.mean_loss;
  const std::optional<float> rate = ScheduledRateAt(step);
  char rate_field[32] = "";
  if (rate) std::snprintf(rate_field, sizeof(rate_field), ", LR: %.6g", *rate);
  Print(
      "Step: %lld, Epoch: %lld, Batch: %lld of %lld, Cost: %.4f, "
      "AvgTime: %.2f ms%s\n",
      static_cast<long long>(step), static_cast<long long>(w.epoch + 1),
      static_cast<long long>(w.batch + 1), static_cast<long long>(w.batches_per_epoch), w.mean_loss,
      w.mean_step_ms, rate_field);
  if (!events_) return Status::OK();
  std::vector<std::pair<std::string, double>> scalars = {{"loss", last_loss_},
                                                         {"steps_per_sec", progress.steps_per_sec},
                                                         {"staleness_mean", staleness_mean}};
  if (rate) scalars.emplace_back("learning_rate", *rate);
  return events_->AddScalars(step, scalars);
}

Status ChiefReporter::LogLastTraining(int64_t step, const ReportWindow& w,
                                      const ProgressSnapshot& progress, double staleness_mean) {
  if (w.reports == 0 && last_window_.reports == 0) return Status::OK();
  // Copied: LogTraining replaces last_window_.
  const ReportWindow shown = w.reports > 0 ? w : last_window_;
  return LogTraining(step, shown, progress, staleness_mean);
}

Status ChiefReporter::RecordStreamedFile(int64_t step, const StreamedFile& file, int64_t files,
                                         int64_t examples, const FileScore& window) {
  if (!file.error.empty()) {
    LOG(ERROR) << "worker:" << file.worker << " could not train " << file.path << ": "
               << file.error;
    return Status::OK();
  }
  LOG(INFO) << "file " << files << " trained: " << file.path << ", " << file.examples
            << " lines by worker:" << file.worker << " (global step " << step
            << "); progressive AUC " << file.auc << ", log-loss " << file.log_loss << "; last "
            << window.examples << " lines: AUC " << window.auc << ", log-loss " << window.log_loss;
  MetricsRecord r;
  r.Add("format_version", kMetricsFormatVersion).Add("step", step).Add("file", files);
  r.Add("file_examples", file.examples).Add("stream_examples", examples);
  r.Add("progressive_auc", file.auc).Add("progressive_log_loss", file.log_loss);
  r.Add("window_auc", window.auc).Add("window_log_loss", window.log_loss);
  PST_RETURN_IF_ERROR(metrics_->Write(r));
  if (events_) {
    PST_RETURN_IF_ERROR(
        events_->AddScalars(step, {{"progressive_auc", file.auc},
                                   {"progressive_log_loss", file.log_loss},
                                   {"progressive_window_auc", window.auc},
                                   {"progressive_window_log_loss", window.log_loss}}));
  }
  gauges_.Update([&](TrainingSnapshot& s) {
    s.stream_files = files;
    s.stream_examples = examples;
    s.progressive_auc = file.auc;
    s.progressive_log_loss = file.log_loss;
    s.window_auc = window.auc;
    s.window_log_loss = window.log_loss;
  });
  return Status::OK();
}

Status ChiefReporter::RecordEvaluation(int64_t step, int64_t start_step, double elapsed,
                                       const Evaluation& test,
                                       const std::optional<Evaluation>& validation,
                                       const ClusterCounts& c) {
  MetricsRecord r;
  // The format's version: keys are added over time, never renamed.
  r.Add("format_version", kMetricsFormatVersion);
  r.Add("time", elapsed).Add("step", step).Add("train_loss", last_loss_);
  r.Add("steps_per_sec", PerSecond(step - start_step, elapsed));
  if (const std::optional<float> rate = ScheduledRateAt(step)) r.Add("learning_rate", *rate);
  r.Add("examples_per_sec", PerSecond(state_->total_examples(), elapsed));
  r.Add("live_workers", state_->live_workers())
      .Add("live_ps", state_->live_ps())
      .Add("task_deaths", state_->deaths());
  r.Add("test_loss", test.loss).Add("test_accuracy", test.accuracy);
  if (test.binary()) r.Add("test_auc", test.auc).Add("test_log_loss", test.log_loss);
  if (validation) {
    r.Add("validation_loss", validation->loss).Add("validation_accuracy", validation->accuracy);
    if (validation->binary()) r.Add("validation_auc", validation->auc);
  }
  // Loss, steps/s and staleness go to TensorBoard every --log_every_steps
  // (LogTraining); here what only an evaluation knows.
  if (events_) {
    PST_RETURN_IF_ERROR(
        events_->AddScalars(step, {{"test_loss", test.loss},
                                   {"test_accuracy", test.accuracy},
                                   {"gradients_dropped", static_cast<double>(c.stale_dropped)}}));
    if (test.binary()) {
      PST_RETURN_IF_ERROR(
          events_->AddScalars(step, {{"test_auc", test.auc}, {"test_log_loss", test.log_loss}}));
    }
  }
  gauges_.Update([&](TrainingSnapshot& s) {
    s.evaluated = true;
    s.test_accuracy = test.accuracy;
    s.test_loss = test.loss;
    s.test_auc = test.binary() ? test.auc : -1;
    s.test_log_loss = test.binary() ? test.log_loss : -1;
    s.gradients_dropped = c.dropped;
    s.stale_gradients_dropped = c.stale_dropped;
  });
  r.Add("staleness_mean", c.staleness_mean())
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
    for (const TableLoad& t : c.shards[k].tables) {
      const std::string table = ps + "table_" + t.name + "_";
      r.Add(table + "rows", t.stats.rows_held)
          .Add(table + "created", t.stats.rows_created)
          .Add(table + "evicted", t.stats.rows_evicted)
          .Add(table + "refused", t.stats.keys_refused);
    }
  }
  LogTables(step, c);
  return metrics_->Write(r);
}

void ChiefReporter::LogTables(int64_t step, const ClusterCounts& c) const {
  for (size_t k = 0; k < c.shards.size(); ++k) {
    for (const TableLoad& t : c.shards[k].tables) {
      const EmbeddingTableStats& s = t.stats;
      LOG(INFO) << "step " << step << ": ps:" << k << " table '" << t.name << "' holds "
                << s.rows_held << " rows (" << s.bytes << " B); created " << s.rows_created
                << ", evicted " << s.rows_evicted << ", keys refused " << s.keys_refused
                << ", gradient rows dropped " << s.rows_dropped;
    }
  }
}

// Stdout carries the report lines users read; glog goes to stderr.
void ChiefReporter::Print(const char* format, ...) const {
  va_list args;
  va_start(args, format);
  std::vfprintf(out_, format, args);
  va_end(args);
  std::fflush(out_);
}

void ChiefReporter::PrintReport(int64_t step, const Evaluation& test,
                                const std::optional<Evaluation>& validation, double total_seconds,
                                const ClusterCounts& c, bool sync,
                                std::optional<int64_t> model_step) {
  if (validation) Print("Validation-Accuracy: %.4f\n", validation->accuracy);
  if (validation && validation->binary()) Print("Validation-AUC: %.4f\n", validation->auc);
  Print("Test-Accuracy: %.4f\n", test.accuracy);
  if (test.binary()) {
    Print("Test-AUC: %.4f\n", test.auc);
    Print("Test-LogLoss: %.4f\n", test.log_loss);
    Print("Test-CTR: %.4f\n", test.ctr);
  }
  Print("Total Time: %.2fs\n", total_seconds);
  Print("Final Cost: %.4f\n", last_loss_);
  Print("Global-Step: %lld\n", static_cast<long long>(step));
  if (model_step) Print("Model-Step: %lld\n", static_cast<long long>(*model_step));
  Print("Stale-Gradients-Dropped: %llu\n", static_cast<unsigned long long>(c.stale_dropped));
  if (!sync) return;
  std::string aggregated;
  for (size_t i = 0; i < c.aggregated.size(); ++i) {
    aggregated +=
        (i ? " worker:" : "worker:") + std::to_string(i) + "=" + std::to_string(c.aggregated[i]);
  }
  Print("Aggregated-Gradients: %s\n", aggregated.c_str());
}

}  // namespace pst
