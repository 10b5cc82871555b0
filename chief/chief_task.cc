#include "chief/chief_task.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "chief/checkpoints/checkpointer.h"
#include "chief/chief_checkpoints.h"
#include "chief/chief_reporter.h"
#include "chief/chief_service.h"
#include "chief/chief_state.h"
#include "chief/chief_timeline.h"
#include "chief/export/model_exporter.h"
#include "chief/liveness_monitor.h"
#include "chief/lr_plateau.h"
#include "chief/replication/routes_board.h"
#include "chief/reporting/cluster_evaluator.h"
#include "chief/reporting/metrics_writer.h"
#include "chief/shard_keeper.h"
#include "chief/sync/ssp_coordinator.h"
#include "chief/sync/sync_coordinator.h"
#include "common/clock.h"
#include "common/create_folder.h"
#include "common/signal_watcher.h"
#include "common/stop_signals.h"
#include "data/file_glob.h"
#include "job/job.h"
#include "model/zoo/model_zoo.h"
#include "ps/ps_client.h"
#include "ps/shard_admin.h"
#include "transport/bind_address.h"
#include "transport/zmq_transport.h"

namespace pst {
namespace {

uint64_t NewClusterId() {
  std::random_device rd;
  uint64_t id = 0;
  while (id == 0) id = (uint64_t{rd()} << 32) ^ rd();
  return id;
}

// The chief's side of --lr_schedule=plateau; null for another schedule.
std::unique_ptr<LrPlateau> MakeLrPlateau(const ChiefOptions& options, ShardAdmin* ps) {
  if (options.shard.lr_schedule != "plateau") return nullptr;
  StatusOr<LrSchedule> schedule = LrScheduleOf(options.shard);
  CHECK(schedule.ok()) << "the flags let a bad schedule through: " << schedule.status().ToString();
  return std::make_unique<LrPlateau>(*schedule, options.lr_plateau, ps);
}

ClientIdentity Identity(const ChiefOptions& options, uint64_t cluster_id) {
  ClientIdentity id;
  id.role = wire::Role::Chief;
  id.cluster_id = cluster_id;
  id.rpc_timeout_ms = options.rpc_timeout_ms;
  id.max_message_bytes = options.max_message_bytes;
  id.curve = options.curve;
  id.container = options.container;
  return id;
}

// The chief's pieces and its start-up: it serves the workers' and ps'
// requests, brings the shards up (ShardKeeper), opens training and hands the
// run to the ChiefTimeline.
class Chief {
 public:
  // `transport` serves the chief and reaches the ps; `clock` and `pause`:
  // see RunChiefOn.
  Chief(const ChiefOptions& options, Transport& transport, const MonotonicClock& clock,
        ChiefTimeline::Pause pause, std::unique_ptr<Model> model, Placement placement, Job job,
        std::unique_ptr<MetricsWriter> metrics, uint64_t cluster_id)
      : options_(options),
        cluster_id_(cluster_id),
        transport_(transport),
        clock_(clock),
        pause_(std::move(pause)),
        ps_(transport_, options.cluster, std::move(placement), Identity(options, cluster_id)),
        admin_(&ps_),
        state_(ps_.placement().Hash(), options.train_steps, num_workers(),
               static_cast<int>(options.cluster.ps.size()), job.Describe(), clock),
        // The evaluator keeps the Job: its test sets, and what model.bin records.
        evaluator_(std::move(model), std::move(job), &ps_, options.tables),
        lr_plateau_(MakeLrPlateau(options, &admin_)),
        reporter_(options, &state_, std::move(metrics), stdout, lr_plateau_.get()) {
    // Its routes change only between its own calls (ReplicaKeeper): a
    // request refused by a lost primary fails at once, and the keeper
    // repairs the chains, instead of waiting --rpc_timeout_ms in vain.
    if (options.ps_replicas > 1) ps_.RouteByChains(&routes_, WhenRefused::kFail);
    if (!options.checkpoint_dir.empty()) {
      checkpointer_ = std::make_unique<Checkpointer>(options.checkpoint_dir,
                                                     options.keep_checkpoints, cluster_id, &admin_);
    }
  }

  Status Run(const std::atomic<bool>& stop) {
    PST_RETURN_IF_ERROR(reporter_.OpenEvents());
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
    std::unique_ptr<Server> server = transport_.Listen(
        server_options,
        [this](const ReceivedMessage& r, RequestContext& c) { return service_->Handle(r, c); });
    if (options_.shard.mode == TrainingMode::kSync) {
      SyncQuorum quorum;
      quorum.fixed = options_.auto_quorum ? 0 : options_.shard.replicas_to_aggregate;
      sync_ = std::make_unique<SyncCoordinator>(SyncShards(ps_.placement()), num_workers(),
                                                options_.train_steps, server.get(), quorum);
    }
    if (options_.staleness_bound) {
      PST_ASSIGN_OR_RETURN(ssp_, MakeSspCoordinator(server.get()));
    }
    if (!options_.job.data.train_files.empty()) {
      files_ = std::make_unique<FileDispatcher>(options_.job.data.train_files, clock_);
    }
    service_ = std::make_unique<ChiefService>(
        &state_, sync_.get(), num_workers(), ps_.num_shards(), ssp_.get(),
        options_.ps_replicas > 1 ? &routes_ : nullptr, options_.ps_replicas, files_.get());
    PST_RETURN_IF_ERROR(server->Start());
    PST_ASSIGN_OR_RETURN(std::unique_ptr<MetricsHttpServer> endpoint,
                         reporter_.StartEndpoint(bind.address));
    LivenessMonitor liveness(&state_, std::chrono::milliseconds(options_.heartbeat_timeout_ms),
                             clock_);
    LOG(INFO) << "chief serving on " << server->bound_endpoint() << ", cluster id " << cluster_id_;
    ShardKeeper keeper(options_, &admin_, sync_.get(), checkpointer_.get(), stop, clock_,
                       lr_plateau_.get(), &routes_);
    ChiefCheckpoints checkpoints(options_, checkpointer_.get(), sync_.get(), &keeper, clock_,
                                 lr_plateau_.get());
    PST_RETURN_IF_ERROR(keeper.WaitForShards());
    std::vector<Tensor> untrained = keeper.InitialValues();
    untrained.erase(untrained.begin());  // the global step
    PST_RETURN_IF_ERROR(evaluator_.EvaluateUntrained(untrained));
    PST_ASSIGN_OR_RETURN(const int64_t start_step, keeper.Start());
    // A resumed run's workers may still be running.
    if (start_step > 0) state_.AwaitEarlierWorkersFor(options_.earlier_workers_window());
    state_.set_state(wire::ClusterState::Training);
    if (sync_) sync_->Open(start_step);
    const MonotonicClock::TimePoint opened = clock_.Now();
    checkpoints.Restart(start_step, opened);
    const double earlier_seconds = checkpoints.InheritRunStart(start_step);
    LOG(INFO) << "training opened: " << num_workers() << " workers, " << options_.cluster.ps.size()
              << " ps, " << StepsLine() << ", " << ModeLine();
    std::unique_ptr<ModelExporter> exporter;
    if (options_.export_every_secs > 0) {
      exporter = std::make_unique<ModelExporter>(options_, &evaluator_, &admin_, clock_);
    }
    ChiefTimeline timeline(options_, state_, sync_.get(), keeper, checkpoints, reporter_,
                           evaluator_, stop, clock_, pause_, lr_plateau_.get(), files_.get(),
                           exporter.get());
    PST_RETURN_IF_ERROR(timeline.Run(start_step, opened, earlier_seconds));
    server->Stop();
    return Status::OK();
  }

 private:
  int num_workers() const { return static_cast<int>(options_.cluster.workers.size()); }
  std::string StepsLine() const {
    std::string steps = options_.train_steps == kUntilStopped
                            ? std::string("until stopped")
                            : std::to_string(options_.train_steps) + " steps";
    if (files_)
      steps += ", files of --train_files=" + options_.job.data.train_files + " as they come";
    return steps;
  }
  // How this run trains, for the log.
  std::string ModeLine() const {
    if (ssp_) return "ssp, staleness bound " + std::to_string(*options_.staleness_bound);
    if (!sync_) return "async";
    if (options_.auto_quorum) return "sync, --replicas_to_aggregate=auto";
    return "sync, --replicas_to_aggregate=" + std::to_string(options_.shard.replicas_to_aggregate);
  }

  // --mode=ssp; the clock log goes to --run_dir/ssp_clocks.tsv.
  StatusOr<std::unique_ptr<SspCoordinator>> MakeSspCoordinator(ReplySender* replies) {
    std::unique_ptr<std::ofstream> log;
    if (!options_.run_dir.empty()) {
      const std::string path = options_.run_dir + "/ssp_clocks.tsv";
      log = std::make_unique<std::ofstream>(path);
      if (!*log) return FileError("cannot write " + path, errno);
    }
    return std::make_unique<SspCoordinator>(num_workers(), *options_.staleness_bound,
                                            options_.train_steps, replies, std::move(log));
  }

  const ChiefOptions& options_;
  const uint64_t cluster_id_;
  Transport& transport_;
  const MonotonicClock& clock_;
  const ChiefTimeline::Pause pause_;
  RoutesBoard routes_;  // the shards' chains (--ps_replicas > 1); before ps_, which reads it
  PsClient ps_;         // the evaluation's pulls, and admin_'s connections
  ShardAdmin admin_;    // over ps_
  ChiefState state_;
  ClusterEvaluator evaluator_;
  std::unique_ptr<LrPlateau> lr_plateau_;  // null unless --lr_schedule=plateau
  ChiefReporter reporter_;
  std::unique_ptr<Checkpointer> checkpointer_;  // null without --checkpoint_dir
  std::unique_ptr<SyncCoordinator> sync_;       // null in async mode
  std::unique_ptr<SspCoordinator> ssp_;         // null unless --mode=ssp
  std::unique_ptr<FileDispatcher> files_;       // null unless --follow
  std::unique_ptr<ChiefService> service_;
};

}  // namespace

Status RunChiefOn(const ChiefOptions& options, Transport& transport, const MonotonicClock& clock,
                  const ChiefTimeline::Pause& pause, const std::atomic<bool>& stop) {
  PST_RETURN_IF_ERROR(CreateFolder(options.run_dir, "--run_dir=" + options.run_dir));
  // Found unwritable now rather than after training.
  PST_RETURN_IF_ERROR(CreateFolder(std::filesystem::path(options.export_onnx).parent_path(),
                                   "the folder of --export_onnx"));
  JobOptions job_options = options.job;
  PST_RETURN_IF_ERROR(ResolveFirstStreamFile(
      &job_options.data, std::chrono::milliseconds(options.join_timeout_ms), stop));
  PST_ASSIGN_OR_RETURN(Job job, LoadJob(job_options, /*with_test=*/true));
  LOG(INFO) << "job: " << job.Describe() << "; " << job.data.train.size << " training, "
            << job.data.validation.size << " validation, " << job.data.test.size
            << " test examples";
  job.data.train = Dataset();  // the chief evaluates; it does not train
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, MakeJobModel(job));
  PlacementOptions placement_options = options.placement;
  placement_options.num_shards = static_cast<int>(options.cluster.ps.size());
  PST_ASSIGN_OR_RETURN(Placement placement, Placement::Compute(WithGlobalStep(model->variables()),
                                                               placement_options, model->tables()));
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
  Chief chief(options, transport, clock, pause, std::move(model), std::move(placement),
              std::move(job), std::move(metrics), cluster_id);
  return chief.Run(stop);
}

int ChiefExitCode(const Status& status, int stop_signal) {
  if (status.ok()) return 0;
  return stop_signal ? 128 + stop_signal : 1;
}

Status RunChief(const ChiefOptions& options, int* stop_signal) {
  std::atomic<bool> stop{false};
  std::atomic<int> signal_number{0};
  StopSignals stop_signals;
  SignalWatcher signals([&stop, &signal_number, &stop_signals](int signal) {
    switch (stop_signals.OnSignal(SteadyClock().Now())) {
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
  zmq::context_t context(1);
  ZmqTransport transport(context);
  const Status status = RunChiefOn(
      options, transport, SteadyClock(),
      [](MonotonicClock::Duration d) { std::this_thread::sleep_for(d); }, stop);
  if (stop_signal) *stop_signal = signal_number.load();
  return status;
}

}  // namespace pst
