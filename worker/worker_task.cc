#include "worker/worker_task.h"

#include <algorithm>
#include <numeric>
#include <thread>

#include "common/signal_watcher.h"
#include "data/idx_reader.h"
#include "data/input_pipeline.h"
#include "model/model_zoo.h"
#include "ps/ps_client.h"
#include "worker/chief_link.h"

namespace pst {
namespace {

// Waits until worker 0 has taken the global step past the warm-up.
Status WaitForWarmup(PsClient& ps, int64_t warmup_steps, const std::atomic<bool>& stop) {
  LOG(INFO) << "warm-up: waiting until worker 0 reaches global step " << warmup_steps;
  while (!stop.load()) {
    PST_ASSIGN_OR_RETURN(int64_t step, ps.GlobalStep());
    if (step >= warmup_steps) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::OK();
}

// What happened to this worker's sync pushes.
struct SyncCounts {
  int64_t pushes = 0;
  int64_t stale = 0;
  int64_t duplicate = 0;
  int64_t last_token = -1;
  int64_t max_token_gap = 0;  // largest step advance between two of its tokens
};

}  // namespace

Status RunWorker(const WorkerOptions& options) {
  const std::string me = "worker:" + std::to_string(options.task_index);
  std::atomic<bool> stop{false};
  SignalWatcher signals([&stop](int) { stop.store(true); });

  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, MakeModel(options.model));
  PST_ASSIGN_OR_RETURN(Dataset train, LoadMnist(options.data_dir, /*train=*/true));
  InputPipelineOptions pipeline_options;
  pipeline_options.batch_size = options.batch_size;
  pipeline_options.worker_index = options.task_index;
  pipeline_options.num_workers = static_cast<int>(options.cluster.workers.size());
  pipeline_options.seed = options.seed;
  PST_ASSIGN_OR_RETURN(std::unique_ptr<InputPipeline> input,
                       InputPipeline::Create(train, pipeline_options));

  PlacementOptions placement_options = options.placement;
  placement_options.num_shards = static_cast<int>(options.cluster.ps.size());
  PST_ASSIGN_OR_RETURN(Placement placement,
                       Placement::Compute(WithGlobalStep(model->variables()),
                                          placement_options));
  const uint64_t placement_hash = placement.Hash();

  zmq::context_t context(1);
  ChannelOptions chief_options;
  chief_options.peer_name = "chief";
  chief_options.endpoint = options.cluster.chief.Endpoint();
  chief_options.cluster_id = options.cluster_id;
  chief_options.role = wire::Role::Worker;
  chief_options.index = options.task_index;
  chief_options.rpc_timeout_ms = options.rpc_timeout_ms;
  ChiefLink chief(context, chief_options);
  PST_ASSIGN_OR_RETURN(
      JoinResult joined,
      chief.Join(placement_hash,
                 Clock::now() + std::chrono::milliseconds(options.join_timeout_ms)));
  LOG(INFO) << me << " joined cluster " << joined.cluster_id << " ("
            << options.model << ", " << placement.slices().size() << " slices on "
            << placement.num_shards() << " ps, train_steps " << joined.train_steps << ")";

  ClientIdentity identity;
  identity.role = wire::Role::Worker;
  identity.index = options.task_index;
  identity.cluster_id = joined.cluster_id;
  identity.rpc_timeout_ms = options.rpc_timeout_ms;
  identity.max_message_bytes = options.max_message_bytes;
  PsClient ps(context, options.cluster, std::move(placement), identity);

  if (options.task_index != 0 && options.warmup_steps > 0) {
    PST_RETURN_IF_ERROR(WaitForWarmup(ps, options.warmup_steps, stop));
  }

  // Model variables are 1..n of the placement's list (0 is the global step).
  std::vector<int> variables(model->variables().size());
  std::iota(variables.begin(), variables.end(), 1);
  std::vector<Tensor> params, grads;
  input->Start();
  TrainingReport report;
  SyncCounts sync;
  int64_t local_steps = 0;
  double window_loss = 0, window_ms = 0;
  int64_t window_steps = 0;
  while (!stop.load()) {
    int64_t token = 0;
    if (options.sync) {
      PST_ASSIGN_OR_RETURN(
          std::optional<int64_t> granted,
          chief.TakeToken(Clock::now() + std::chrono::milliseconds(options.join_timeout_ms)));
      if (!granted) break;  // the chief is stopping the cluster
      token = *granted;
      if (sync.last_token >= 0) {
        sync.max_token_gap = std::max(sync.max_token_gap, token - sync.last_token);
      }
      sync.last_token = token;
    }
    PST_ASSIGN_OR_RETURN(PipelineBatch next, input->Next());
    const auto start = Clock::now();
    PST_RETURN_IF_ERROR(ps.Pull(variables, &params));
    PST_ASSIGN_OR_RETURN(float loss, model->ComputeGradients(params, next.batch, &grads));
    if (options.simulated_delay_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options.simulated_delay_ms));
    }
    PushSummary pushed;
    if (options.sync) {
      PST_ASSIGN_OR_RETURN(pushed, ps.SyncPush(variables, grads, token));
      ++sync.pushes;
      if (pushed.stale_shards > 0) ++sync.stale;
      if (pushed.duplicate_shards > 0) ++sync.duplicate;
      pushed.global_step = token;
    } else {
      PST_ASSIGN_OR_RETURN(pushed, ps.Push(variables, grads, true));
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    ++local_steps;
    window_loss += loss;
    window_ms += ms;
    ++window_steps;
    report = {pushed.global_step, loss, next.batch.size, next.epoch,
              next.batch_in_epoch, next.batches_per_epoch, static_cast<float>(ms)};
    if (local_steps % options.log_every_steps == 0) {
      LOG(INFO) << "Step: " << pushed.global_step << ", Epoch: " << next.epoch + 1
                << ", Batch: " << next.batch_in_epoch + 1 << " of "
                << next.batches_per_epoch << ", Cost: " << window_loss / window_steps
                << ", AvgTime: " << window_ms / window_steps << " ms";
      window_loss = window_ms = 0;
      window_steps = 0;
    }
    if (!options.sync && pushed.global_step >= joined.train_steps) break;
    if (local_steps % options.report_every_steps == 0) {
      PST_RETURN_IF_ERROR(chief.Report(report));
      if (chief.stopping()) break;
    }
  }
  if (options.sync) {
    LOG(INFO) << me << " sync pushes: " << sync.pushes << ", stale " << sync.stale
              << ", duplicate " << sync.duplicate << ", largest token gap "
              << sync.max_token_gap;
  }
  input->Stop();
  LOG(INFO) << me << " stops after " << local_steps << " local steps (global step "
            << report.step << ")";
  return chief.Leave(report);
}

}  // namespace pst
