#include "worker/worker_task.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>

#include "common/clock.h"
#include "common/non_finite.h"
#include "common/signal_watcher.h"
#include "data/file_glob.h"
#include "data/input_pipeline.h"
#include "model/parallel/make_pipelined_model.h"
#include "model/zoo/model_zoo.h"
#include "ps/ps_client.h"
#include "ps/ps_failure.h"
#include "transport/heartbeat_sender.h"
#include "transport/zmq_transport.h"
#include "worker/chief_link.h"
#include "worker/chief_routes.h"
#include "worker/divergence.h"
#include "worker/gradient_clipping.h"
#include "worker/gradient_streamer.h"
#include "worker/stream_file.h"

namespace pst {
namespace {

MonotonicClock::TimePoint After(int ms) {
  return SteadyClock().Now() + std::chrono::milliseconds(ms);
}

// Mean cost and step time over the steps since the last line, printed in
// the seed's format every `every` steps.
class StepLog {
 public:
  explicit StepLog(int64_t every) : every_(every) {}
  void Add(const TrainingReport& r, int64_t local_step) {
    loss_ += r.loss;
    ms_ += r.step_time_ms;
    ++steps_;
    if (local_step % every_ != 0) return;
    LOG(INFO) << "Step: " << r.step << ", Epoch: " << r.epoch + 1 << ", Batch: " << r.batch + 1
              << " of " << r.batches_per_epoch << ", Cost: " << loss_ / steps_
              << ", AvgTime: " << ms_ / steps_ << " ms";
    loss_ = ms_ = 0;
    steps_ = 0;
  }

 private:
  const int64_t every_;
  double loss_ = 0, ms_ = 0;
  int64_t steps_ = 0;
};

// What happened to this worker's sync pushes.
struct SyncCounts {
  int64_t pushes = 0;
  int64_t stale = 0;
  int64_t duplicate = 0;
  int64_t last_token = -1;
  int64_t max_token_gap = 0;  // largest step advance between two of its tokens
};

// --clip_norm: the steps whose gradient was clipped, of those computed.
struct ClipCounts {
  int64_t steps = 0;
  int64_t clipped = 0;
};

class Worker {
 public:
  Worker(const WorkerOptions& options, Transport& transport, const std::atomic<bool>& stop)
      : options_(options),
        stop_(stop),
        me_("worker:" + std::to_string(options.task_index)),
        transport_(transport) {}

  Status Run() {
    PST_RETURN_IF_ERROR(Prepare());
    PST_RETURN_IF_ERROR(JoinCluster());
    if (training_over_) {
      LOG(INFO) << me_ << " joined after training ended: nothing to do";
      return Status::OK();
    }
    if (options_.task_index != 0 && options_.warmup_steps > 0) {
      PST_RETURN_IF_ERROR(WaitForWarmup());
    }
    if (input_) input_->Start();
    Status trained = following() ? TrainStream() : Train();
    if (input_) input_->Stop();
    PST_RETURN_IF_ERROR(trained);
    LOG(INFO) << me_ << " stops after " << local_steps_ << " local steps (global step "
              << last_report_.step << ")";
    if (streamer_->phases().steps() > 0) {
      LOG(INFO) << me_ << " step time: " << streamer_->phases().Describe();
    }
    if (options_.clip_norm > 0) {
      LOG(INFO) << me_ << " clipped the gradient to --clip_norm=" << options_.clip_norm << " in "
                << clipping_.clipped << " of " << clipping_.steps << " steps";
    }
    if (options_.sync) {
      LOG(INFO) << me_ << " sync pushes: " << sync_.pushes << ", stale " << sync_.stale
                << ", duplicate " << sync_.duplicate << ", largest token gap "
                << sync_.max_token_gap;
    }
    return chief_->Leave(last_report_);
  }

 private:
  // Model, data, placement: everything that needs no other task.
  Status Prepare() {
    JobOptions job_options = options_.job;
    PST_RETURN_IF_ERROR(ResolveFirstStreamFile(
        &job_options.data, std::chrono::milliseconds(options_.join_timeout_ms), stop_));
    PST_ASSIGN_OR_RETURN(Job job, LoadJob(job_options, /*with_test=*/false));
    job_description_ = job.Describe();
    PST_ASSIGN_OR_RETURN(model_, MakeModelOnDevice(job));
    num_fields_ = job.num_fields;
    PST_RETURN_IF_ERROR(PrepareInput(std::move(job)));
    PlacementOptions placement = options_.placement;
    placement.num_shards = static_cast<int>(options_.cluster.ps.size());
    PST_ASSIGN_OR_RETURN(placement_, Placement::Compute(WithGlobalStep(model_->variables()),
                                                        placement, model_->tables()));
    // Model variables are 1..n of the placement's list (0 is the global step).
    variables_.resize(model_->variables().size());
    std::iota(variables_.begin(), variables_.end(), 1);
    for (const VariableSpec& spec : model_->variables()) {
      moving_averages_.push_back(spec.moving_average);
    }
    rows_.resize(model_->tables().size());
    for (size_t t = 0; t < rows_.size(); ++t) rows_[t].table = static_cast<int>(t);
    return Status::OK();
  }

  bool following() const { return !options_.job.data.train_files.empty(); }

  // The training batches: the input pipeline over the job's training set,
  // or, with --follow, none (the files come from the chief: TrainStream).
  Status PrepareInput(Job job) {
    if (following()) {
      if (model_->tables().empty()) {
        return InvalidArgument("--follow trains click models only (--model=" + job.model + ")");
      }
      return Status::OK();
    }
    train_ = std::move(job.data.train);
    InputPipelineOptions input;
    input.batch_size = options_.batch_size;
    input.worker_index = options_.task_index;
    input.num_workers = static_cast<int>(options_.cluster.workers.size());
    input.seed = options_.seed;
    input.augment = options_.augment;
    input.standardization = job.data.standardization;
    PST_ASSIGN_OR_RETURN(input_, InputPipeline::Create(train_, input));
    if (input_->augments()) {
      LOG(INFO) << me_ << " augments its training batches: crop padding "
                << options_.augment.crop_padding << ", flip "
                << (options_.augment.flip ? "on" : "off");
    }
    return Status::OK();
  }

  // The model on --device; with --allow_soft_placement a device that cannot
  // be used (no GPU, no CUDA back end) falls back to the CPU, and says so.
  StatusOr<std::unique_ptr<Model>> MakeModelOnDevice(const Job& job) {
    KernelsOptions kernels;
    kernels.gpu_memory_fraction = options_.gpu_memory_fraction;
    kernels.cpu_kernels = options_.cpu_kernels;
    kernels.intra_op_threads = options_.intra_op_threads;
    if (job.click_model) {
      // The embedding layer runs on the CPU (soft placement), on one replica.
      if (options_.model_parallel != 1 || options_.device.find(',') != std::string::npos) {
        return InvalidArgument(
            "a click model trains on one device: no --model_parallel and "
            "no device list");
      }
      if (options_.device != "cpu") {
        LOG(WARNING) << me_ << ": a click model runs on the cpu (embedding tables are looked up "
                     << "on the host), not on " << options_.device;
      }
      return MakeJobModel(job, kernels);
    }
    // --model_parallel cuts the model into pipeline stages on --device.
    auto make = [&](const std::string& device) {
      if (options_.model_parallel == 1) {
        return MakeModel(job.model, job.input, job.num_classes, device, kernels);
      }
      const PipelineOptions pipeline{options_.model_parallel, options_.micro_batches};
      return MakePipelinedModel(job.model, job.input, job.num_classes, device, pipeline, kernels);
    };
    StatusOr<std::unique_ptr<Model>> model = make(options_.device);
    if (!model.ok() && model.status().code() == Code::kFailedPrecondition &&
        options_.allow_soft_placement) {
      LOG(WARNING) << me_ << ": --allow_soft_placement: falling back to cpu ("
                   << model.status().message() << ")";
      model = make("cpu");
    }
    if (model.ok() && options_.log_device_placement) {
      for (const std::string& line : (*model)->Placement()) LOG(INFO) << me_ << ": " << line;
    }
    return model;
  }

  // Waits for the chief to open training, then connects to the ps shards.
  Status JoinCluster() {
    ChannelOptions chief;
    chief.peer_name = "chief";
    chief.endpoint = options_.cluster.chief.Endpoint();
    chief.cluster_id = options_.cluster_id;
    chief.role = wire::Role::Worker;
    chief.index = options_.task_index;
    chief.rpc_timeout_ms = options_.rpc_timeout_ms;
    chief.curve = options_.curve;
    chief_ = std::make_unique<ChiefLink>(transport_, chief);
    PST_ASSIGN_OR_RETURN(JoinResult joined, chief_->Join(placement_->Hash(), job_description_,
                                                         After(options_.join_timeout_ms), stop_,
                                                         options_.ps_replicas));
    train_steps_ = joined.train_steps;
    training_over_ = joined.training_over;
    const uint64_t cluster_id = joined.cluster_id;
    // A worker told training is over leaves at once: heartbeats would make
    // the chief adopt it as one of its run's workers and wait for its goodbye.
    if (training_over_) return Status::OK();
    heartbeat_ = std::make_unique<HeartbeatSender>(transport_, chief, options_.heartbeat_interval,
                                                   [cluster_id] { return cluster_id; });
    LOG(INFO) << me_ << " joined cluster " << joined.cluster_id << " (" << job_description_ << ", "
              << placement_->slices().size() << " slices on " << placement_->num_shards()
              << " ps, train_steps " << train_steps_ << ")";
    ClientIdentity identity;
    identity.role = wire::Role::Worker;
    identity.index = options_.task_index;
    identity.cluster_id = joined.cluster_id;
    identity.rpc_timeout_ms = options_.rpc_timeout_ms;
    identity.max_message_bytes = options_.max_message_bytes;
    identity.curve = options_.curve;
    identity.interrupt = &stop_;  // a signal ends a pull or push at once
    identity.wire_dtype = options_.wire_dtype;
    identity.container = options_.container;
    ps_ = std::make_unique<PsClient>(transport_, options_.cluster, *placement_, identity);
    streamer_ = std::make_unique<GradientStreamer>(ps_.get(), model_->variables(), variables_,
                                                   options_.push_bucket_bytes);
    if (options_.ps_replicas > 1) {
      routes_ = std::make_unique<ChiefRoutes>(transport_, chief, placement_->num_shards());
      routes_->set_cluster_id(cluster_id);
      ps_->RouteByChains(routes_.get());
    }
    spare_grads_.resize(ps_->max_pushes_in_flight());
    return Status::OK();
  }

  // Waits until worker 0 has taken the global step past the warm-up.
  Status WaitForWarmup() {
    LOG(INFO) << "warm-up: waiting until worker 0 reaches global step " << options_.warmup_steps;
    while (!stop_.load()) {
      PST_ASSIGN_OR_RETURN(int64_t step, ps_->GlobalStep());
      if (step >= options_.warmup_steps) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::OK();
  }

  // Sync: the next token, or nullopt when the chief is stopping.
  StatusOr<std::optional<SyncToken>> TakeToken() {
    PST_ASSIGN_OR_RETURN(std::optional<SyncToken> token,
                         chief_->TakeToken(After(options_.join_timeout_ms), stop_));
    if (token && sync_.last_token >= 0) {
      sync_.max_token_gap = std::max(sync_.max_token_gap, token->step - sync_.last_token);
    }
    if (token) sync_.last_token = token->step;
    return token;
  }

  // Pull -> compute -> push; `token` is the sync step (unused in async).
  // Async: the push goes out with the next step's pull right behind it
  // (PsClient::PushThenPull), so the next step starts from parameters
  // already pulled; after any failure it pulls afresh. Not in ssp mode: the
  // worker may then wait for the slowest before its next step, and pulls
  // once let go.
  // A non-finite loss or gradient is not pushed: *diverged says what it was.
  StatusOr<PushSummary> Step(const PipelineBatch& next, const SyncToken& token, float* loss,
                             std::optional<std::string>* diverged) {
    if (!rows_.empty()) return ClickStep(next, token, loss, diverged);
    if (!pulled_) PST_RETURN_IF_ERROR(ps_->Pull(variables_, &params_));
    pulled_ = false;
    TakeWritableGradients(&grads_, &spare_grads_);
    if (OverlapsPush()) return OverlappedStep(next, loss, diverged);
    PST_ASSIGN_OR_RETURN(*loss, model_->ComputeGradients(params_, next.batch, &grads_));
    Clip();
    *diverged = NonFiniteStep(*loss, grads_, model_->variables());
    if (*diverged) return PushSummary();
    SimulateDelay();
    if (options_.ssp) return ps_->Push(variables_, grads_, /*increment_global_step=*/true);
    if (!options_.sync) {
      PST_ASSIGN_OR_RETURN(PushSummary pushed,
                           ps_->PushThenPull(variables_, grads_, /*increment_global_step=*/true,
                                             variables_, &params_));
      pulled_ = true;
      return pushed;
    }
    PST_ASSIGN_OR_RETURN(PushSummary pushed,
                         ps_->SyncPush(variables_, grads_, token.step, token.replicas));
    return CountSyncPush(pushed, token);
  }

  // --overlap (async, dense models): each step's push is acknowledged
  // during the next step.
  bool OverlapsPush() const {
    return options_.overlap && !options_.sync && !options_.ssp && rows_.empty();
  }

  // --overlap: the step's gradients pushed in parts as backprop makes them
  // (GradientStreamer, --push_bucket_bytes), the next step's values pulled
  // behind the parts; the push's acknowledgement, which under
  // --ps_replicas waits for the backups, is collected at the next step's
  // first part. Returns the previous push's summary (global step -1 when
  // there was none); when it took the global step to the train steps,
  // training is over and this step is not pushed. With --clip_norm the
  // global norm needs the whole gradient: it goes out as one part.
  StatusOr<PushSummary> OverlappedStep(const PipelineBatch& next, float* loss,
                                       std::optional<std::string>* diverged) {
    SimulateDelay();
    streamer_->StartStep(&grads_, train_steps_);
    const bool clips = options_.clip_norm > 0;
    const StatusOr<float> computed =
        clips ? model_->ComputeGradients(params_, next.batch, &grads_)
              : model_->ComputeGradientsStreamed(
                    params_, next.batch, &grads_,
                    [this](int first, int end) { streamer_->Ready(first, end); });
    if (computed.ok()) {
      *loss = *computed;
      if (clips) {
        Clip();
        streamer_->Ready(0, static_cast<int>(grads_.size()));
      }
    }
    return streamer_->Finish(computed, &params_, &pulled_, diverged);
  }

  // --clip_norm: the step's gradient (variables and table rows) scaled down
  // to that global norm when it is longer; counted for the final log line.
  void Clip() {
    if (options_.clip_norm <= 0) return;
    ++clipping_.steps;
    clipping_.clipped += ClipByGlobalNorm(options_.clip_norm, &grads_, moving_averages_).clipped;
  }

  // Notes a sync push's fate; the step it counts for is the token's.
  PushSummary CountSyncPush(PushSummary pushed, const SyncToken& token) {
    ++sync_.pushes;
    sync_.stale += pushed.stale_shards > 0;
    sync_.duplicate += pushed.duplicate_shards > 0;
    pushed.global_step = token.step;
    return pushed;
  }

  // The straggler of --simulated_delay_ms.
  void SimulateDelay() const {
    if (options_.simulated_delay_ms > 0 && local_steps_ >= options_.simulated_delay_from_step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.simulated_delay_ms));
    }
  }

  // A click model's step: pulls the variables and the rows of the batch's
  // ids (one request per shard), computes, and pushes the variables'
  // gradients with the rows' (duplicates summed by the model).
  // With --follow: `mark` goes with the push, and *probabilities gets the
  // batch's predictions from before the update.
  StatusOr<PushSummary> ClickStep(const PipelineBatch& next, const SyncToken& token, float* loss,
                                  std::optional<std::string>* diverged,
                                  const StreamBatch& mark = {},
                                  std::vector<float>* probabilities = nullptr) {
    TableRowIds ids = model_->RowIds(next.batch);
    for (size_t t = 0; t < rows_.size(); ++t) rows_[t].ids = std::move(ids[t]);
    PST_RETURN_IF_ERROR(ps_->Pull(variables_, &params_, &rows_));
    for (const TableRows& t : rows_) params_.push_back(t.rows);
    StatusOr<float> computed = model_->ComputeGradients(params_, next.batch, &grads_);
    params_.resize(variables_.size());
    PST_RETURN_IF_ERROR(computed.status());
    *loss = *computed;
    if (probabilities != nullptr && !model_->LastTrainingProbabilities(probabilities)) {
      probabilities->clear();
    }
    Clip();  // the rows' gradients count in the norm
    const std::vector<Tensor> row_grads(grads_.begin() + variables_.size(), grads_.end());
    grads_.resize(variables_.size());
    *diverged = NonFiniteStep(*loss, grads_, model_->variables());
    for (size_t t = 0; t < row_grads.size() && !*diverged; ++t) {
      if (FirstNonFinite(row_grads[t].f32(), row_grads[t].num_elements()) <
          row_grads[t].num_elements()) {
        *diverged = "the gradient of table '" + model_->tables()[t].name + "' is not finite";
      }
    }
    if (*diverged) return PushSummary();
    SimulateDelay();
    if (!options_.sync) return ps_->Push(variables_, grads_, true, rows_, row_grads, mark);
    PST_ASSIGN_OR_RETURN(PushSummary pushed, ps_->SyncPush(variables_, grads_, token.step,
                                                           token.replicas, rows_, row_grads));
    return CountSyncPush(pushed, token);
  }

  // Async: the global step has reached --train_steps, but the run is over
  // when the chief says so. A ps lost before the chief's final checkpoint
  // rolls the cluster back to its last one, and the steps lost need their
  // workers: until the chief says it is stopping, the worker reports every
  // 100 ms (it is alive) and trains on (true) if the global step falls back
  // below --train_steps. False: the chief is stopping, or did not close
  // the run within --join_timeout_ms (said in the log), or a signal.
  StatusOr<bool> HoldUntilClosed() {
    LOG(INFO) << me_ << " reached global step " << last_report_.step
              << ": waiting for the chief to close the run";
    TrainingReport alive = last_report_;
    alive.examples = unreported_examples_;
    unreported_examples_ = 0;
    const auto deadline = After(options_.join_timeout_ms);
    while (!stop_.load()) {
      PST_RETURN_IF_ERROR(chief_->Report(alive));
      alive.examples = 0;
      if (chief_->stopping()) return false;
      if (SteadyClock().Now() >= deadline) {
        LOG(WARNING) << me_ << ": the chief did not close the run within --join_timeout_ms of "
                     << "the global step reaching --train_steps; leaving";
        return false;
      }
      StatusOr<int64_t> step = ps_->GlobalStep();
      if (!step.ok()) {
        PST_RETURN_IF_ERROR(WaitOutPsFailure(step.status()));
        continue;
      }
      ps_failed_since_.reset();
      if (*step < train_steps_) {
        LOG(INFO) << me_ << ": the global step fell back to " << *step
                  << " (a restored checkpoint): training on";
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // A ps that died (deadline, unavailable) or came back empty (not yet
  // restored) is waited out: the chief restores the cluster from its last
  // checkpoint. Other errors, and a wait longer than --join_timeout_ms, end
  // the worker.
  Status WaitOutPsFailure(const Status& failure) {
    if (!IsPsFailure(failure)) return failure;
    if (!ps_failed_since_) {
      ps_failed_since_ = SteadyClock().Now();
      LOG(WARNING) << me_ << ": " << failure.ToString() << "; waiting for the cluster to recover";
    } else if (SteadyClock().Now() - *ps_failed_since_ >
               std::chrono::milliseconds(options_.join_timeout_ms)) {
      return Unavailable("the cluster did not recover within --join_timeout_ms: " +
                         failure.ToString());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return Status::OK();
  }

  // Ends training after a step that diverged (`what`): the chief hears of it
  // through a report with a non-finite loss, so it can stop the run. A
  // finite loss whose gradient (or update, refused by a ps) is not finite
  // is reported as NaN: the step has no usable result.
  Status EndDiverged(const std::string& what, int64_t global_step, float loss) {
    TrainingReport report = last_report_;
    report.step = global_step;
    report.loss = std::isfinite(loss) ? std::numeric_limits<float>::quiet_NaN() : loss;
    report.examples = unreported_examples_;
    Status reported = chief_->Report(report);
    // Reports are fire-and-forget; the goodbye is acknowledged, and so shows
    // that the report (sent before it on the same channel) reached the chief.
    if (reported.ok()) reported = chief_->Leave(report);
    if (!reported.ok()) {
      LOG(WARNING) << me_ << ": could not tell the chief: " << reported.ToString();
    }
    return Diverged(what, global_step);
  }

  Status Train() {
    StepLog log(options_.log_every_steps);
    while (!stop_.load()) {
      SyncToken token;
      if (options_.sync) {
        StatusOr<std::optional<SyncToken>> granted = TakeToken();
        if (!granted.ok() && stop_.load()) break;  // a signal
        PST_RETURN_IF_ERROR(granted.status());
        if (!*granted) return Status::OK();  // the chief is stopping the cluster
        token = **granted;
      }
      if (options_.ssp) {
        // The clock: the steps this worker completed (pushed).
        StatusOr<bool> go =
            chief_->AwaitClock(local_steps_, After(options_.join_timeout_ms), stop_);
        if (!go.ok() && stop_.load()) break;  // a signal
        PST_RETURN_IF_ERROR(go.status());
        if (!*go) return Status::OK();  // the chief is stopping the cluster
      }
      PST_ASSIGN_OR_RETURN(PipelineBatch next, input_->Next());
      const auto start = SteadyClock().Now();
      float loss = 0;
      std::optional<std::string> diverged;
      StatusOr<PushSummary> stepped = Step(next, token, &loss, &diverged);
      // The global step of the parameters this step started from, as far as
      // this worker knows (async: the step after its previous push).
      const int64_t global_step = options_.sync ? token.step : last_report_.step;
      if (diverged) return EndDiverged(*diverged, global_step, loss);
      if (IsNonFiniteRefusal(stepped.status())) {
        return EndDiverged(stepped.status().message(), global_step, loss);
      }
      if (!stepped.ok()) {
        if (stop_.load()) break;  // a signal cut the step short
        PST_RETURN_IF_ERROR(WaitOutPsFailure(stepped.status()));
        if (chief_->stopping()) return Status::OK();
        if (options_.sync) chief_->ReturnToken();
        continue;  // the cluster is back: a fresh token, fresh parameters
      }
      ps_failed_since_.reset();
      const PushSummary pushed = *stepped;
      const bool over = !options_.sync && pushed.global_step >= train_steps_;
      // An overlapped step learns the end from the push before it: it was
      // not pushed itself, so it does not count.
      if (!(over && OverlapsPush())) {
        const float ms =
            std::chrono::duration<float, std::milli>(SteadyClock().Now() - start).count();
        unreported_examples_ += next.batch.size;
        // -1: no push was acknowledged in this step (the first overlapped one).
        const int64_t step = pushed.global_step >= 0 ? pushed.global_step : last_report_.step;
        last_report_ = {step,
                        loss,
                        unreported_examples_,
                        next.epoch,
                        next.batch_in_epoch,
                        next.batches_per_epoch,
                        ms};
        log.Add(last_report_, ++local_steps_);
      } else {
        last_report_.step = pushed.global_step;
      }
      if (over) {
        if (options_.ssp) return Status::OK();
        PST_ASSIGN_OR_RETURN(const bool train_on, HoldUntilClosed());
        if (!train_on) return Status::OK();
        pulled_ = false;  // the restored parameters
        continue;
      }
      if (local_steps_ % options_.report_every_steps == 0) {
        PST_RETURN_IF_ERROR(chief_->Report(last_report_));
        unreported_examples_ = 0;
        if (chief_->stopping()) return Status::OK();
      }
    }
    return Status::OK();
  }

  // --follow: trains the files the chief hands out, each once, until the
  // chief stops the cluster (or the global step reaches --train_steps).
  Status TrainStream() {
    StepLog log(options_.log_every_steps);
    FileResult finished;
    while (!stop_.load()) {
      StatusOr<std::optional<std::string>> next =
          chief_->NextFile(finished, After(options_.join_timeout_ms), stop_);
      if (!next.ok() && stop_.load()) break;  // a signal
      PST_RETURN_IF_ERROR(next.status());
      finished = FileResult();
      if (!*next) return Status::OK();  // the chief is stopping the cluster
      if ((*next)->empty()) {
        std::this_thread::sleep_for(kNoFileWait);
        continue;
      }
      PST_ASSIGN_OR_RETURN(const std::optional<FileResult> trained, TrainFile(**next, &log));
      if (!trained) return Status::OK();  // over
      finished = *trained;
    }
    return Status::OK();
  }

  // Trains `path` from the first batch some shard lacks (every batch, for a
  // new file) to its end, through ps failures; nullopt when training ended
  // first. A file that cannot be read is reported with the reason, not
  // trained: the stream goes on.
  StatusOr<std::optional<FileResult>> TrainFile(const std::string& path, StepLog* log) {
    StatusOr<StreamFile> read =
        StreamFile::Read(options_.job.data, num_fields_, path, options_.batch_size);
    if (!read.ok()) {
      LOG(ERROR) << me_ << " skips " << read.status().message();
      FileResult skipped;
      skipped.path = path;
      skipped.error = read.status().message();
      return std::optional<FileResult>(skipped);
    }
    StreamFile& file = *read;
    while (!stop_.load()) {
      StatusOr<std::vector<StreamProgress>> shards = ps_->StreamProgressOf(StreamIdOf(path));
      Status failed = shards.status();
      if (failed.ok()) {
        int64_t first = file.batches() + 1;
        for (const StreamProgress& p : *shards) first = std::min(first, p.next_batch);
        if (first > file.batches()) {
          LOG(INFO) << me_ << ": the shards hold every batch of " << path << " already";
        } else if (first > 1) {
          LOG(INFO) << me_ << " resumes " << path << " at batch " << first << " of "
                    << file.batches() << " (the shards hold the batches before)";
        } else {
          LOG(INFO) << me_ << " trains " << path << ": " << file.batches() << " batches";
        }
        StatusOr<bool> done = TrainBatches(&file, first, log);
        if (done.ok() && !*done) return std::optional<FileResult>();
        if (done.ok()) return std::optional<FileResult>(file.Result());
        failed = done.status();
      }
      if (IsNonFiniteRefusal(failed)) return EndDiverged(failed.message(), last_report_.step, 0);
      if (stop_.load()) break;
      if (IsBehindStream(failed)) {  // a shard went back to a checkpoint under this file
        LOG(INFO) << me_ << ": " << failed.message();
        continue;
      }
      // A ps lost: the chief restores the cluster; the shards' ledgers then
      // say where this file stands again.
      PST_RETURN_IF_ERROR(WaitOutPsFailure(failed));
      if (chief_->stopping()) return std::optional<FileResult>();
    }
    return std::optional<FileResult>();
  }

  // Batches `first`.. of `file`, each pushed with its mark; false when
  // training ended first (a signal, the chief, --train_steps).
  StatusOr<bool> TrainBatches(StreamFile* file, int64_t first, StepLog* log) {
    PipelineBatch next;
    std::vector<float> probabilities;
    for (int64_t b = first; b <= file->batches(); ++b) {
      if (stop_.load()) return false;
      file->Fill(b, &next.batch);
      const auto start = SteadyClock().Now();
      float loss = 0;
      std::optional<std::string> diverged;
      StatusOr<PushSummary> pushed =
          ClickStep(next, SyncToken(), &loss, &diverged, file->Mark(b), &probabilities);
      if (diverged) {
        PST_RETURN_IF_ERROR(EndDiverged(*diverged, last_report_.step, loss));
        return false;
      }
      PST_RETURN_IF_ERROR(pushed.status());
      ps_failed_since_.reset();
      file->Score(b, probabilities);
      const float ms =
          std::chrono::duration<float, std::milli>(SteadyClock().Now() - start).count();
      unreported_examples_ += next.batch.size;
      last_report_ = {pushed->global_step, loss, unreported_examples_, 0, b - 1,
                      file->batches(),     ms};
      log->Add(last_report_, ++local_steps_);
      if (pushed->global_step >= train_steps_) return false;
      if (local_steps_ % options_.report_every_steps == 0) {
        PST_RETURN_IF_ERROR(chief_->Report(last_report_));
        unreported_examples_ = 0;
        if (chief_->stopping()) return false;
      }
    }
    return true;
  }

  // --follow: how long a worker waits before asking again when no file waits.
  static constexpr std::chrono::milliseconds kNoFileWait{200};

  const WorkerOptions& options_;
  const std::atomic<bool>& stop_;
  const std::string me_;
  Transport& transport_;
  std::unique_ptr<Model> model_;
  Dataset train_;
  int num_fields_ = 0;           // the job's click fields (--follow reads files with them)
  std::string job_description_;  // Job::Describe(), which the chief checks
  std::unique_ptr<InputPipeline> input_;
  std::optional<Placement> placement_;
  std::vector<int> variables_;
  // Per model variable: a moving average's delta (not clipped).
  std::vector<bool> moving_averages_;
  std::unique_ptr<ChiefLink> chief_;
  std::unique_ptr<HeartbeatSender> heartbeat_;
  std::unique_ptr<ChiefRoutes> routes_;  // --ps_replicas > 1; before ps_, which uses it
  std::unique_ptr<PsClient> ps_;
  std::unique_ptr<GradientStreamer> streamer_;  // --overlap; uses ps_
  int64_t train_steps_ = 0;
  bool training_over_ = false;
  std::vector<Tensor> params_, grads_;
  // --overlap: see TakeWritableGradients (one set per push in flight).
  std::vector<std::vector<Tensor>> spare_grads_;
  std::vector<TableRows> rows_;  // a click model's rows, one per table
  bool pulled_ = false;          // params_ hold the values for the next step
  TrainingReport last_report_;
  SyncCounts sync_;
  ClipCounts clipping_;
  std::optional<MonotonicClock::TimePoint> ps_failed_since_;  // set while the ps are unreachable
  int64_t local_steps_ = 0;
  // Examples pushed since the last report: a report covers every step since
  // the previous one, and the chief adds them up for examples_per_sec.
  int64_t unreported_examples_ = 0;
};

}  // namespace

Status RunWorkerOn(const WorkerOptions& options, Transport& transport,
                   const std::atomic<bool>& stop) {
  return Worker(options, transport, stop).Run();
}

Status RunWorker(const WorkerOptions& options) {
  // First, before any thread exists, so every thread inherits the blocked signals.
  std::atomic<bool> stop{false};
  SignalWatcher signals([&stop](int) { stop.store(true); });
  zmq::context_t context(1);
  ZmqTransport transport(context);
  return RunWorkerOn(options, transport, stop);
}

}  // namespace pst
