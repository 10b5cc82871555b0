#include "bench/transport/training_comparison.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "bench/bench_timing.h"
#include "bench/check_ok.h"
#include "bench/transport/trainers.h"
#include "bench/transport/training_batches.h"
#include "common/clock.h"
#include "model/layers/initializer.h"
#include "model/zoo/model_zoo.h"
#include "worker/worker_task.h"

namespace pst {

TrainingResult RunTrainingComparison(const TrainingOptions& options, const TimingPlan& plan) {
  TrainingResult result;
  StatusOr<std::unique_ptr<Model>> probe = MakeModel(options.model);
  CheckOk(probe.status(), "MakeModel");
  const int64_t batch_size = options.batch_size;
  TrainingBatches data = MakeTrainingBatches(batch_size, std::max(1, options.batches),
                                             (*probe)->input_dim(), (*probe)->num_classes());
  result.source = data.source;
  std::vector<Tensor> initial;
  for (const VariableSpec& spec : (*probe)->variables()) {
    initial.push_back(InitializeVariable(spec, /*seed=*/1));
  }

  ClusterTrainer cluster(options.model, initial, options.ps_threads, ShmOptions(), std::nullopt);
  const ShmOptions shm{ShmMode::kAuto, size_t{16} << 20};
  ClusterTrainer shared(options.model, initial, options.ps_threads, shm,
                        WorkerOptions().push_bucket_bytes);
  ClusterTrainer whole(options.model, initial, options.ps_threads, shm,
                       std::numeric_limits<int64_t>::max());
  LocalTrainer local(options.model, initial);
  // Warm-up: the same number of steps for both, so that both then see the
  // same batches in the same order; its timing sizes the timed repeats.
  int64_t warmup_steps = 0;
  const auto warm_start = SteadyClock().Now();
  const auto warm_until = warm_start + std::chrono::duration<double>(plan.warmup_s);
  while (warmup_steps < 5 || SteadyClock().Now() < warm_until) {
    cluster.Run(data.batches, 1);
    ++warmup_steps;
  }
  const double step_s = Seconds(SteadyClock().Now() - warm_start) / warmup_steps;
  local.Run(data.batches, warmup_steps);
  shared.Run(data.batches, warmup_steps);
  whole.Run(data.batches, warmup_steps);
  const int64_t steps_per_slice =
      std::max<int64_t>(1, std::llround(plan.seconds_per_repeat / step_s / plan.slices));
  result.steps_per_repeat = steps_per_slice * plan.slices;

  // Like the transport: each repeat takes turns in slices, the order rotating.
  struct Contender {
    Trainer* trainer;
    float* loss;
    std::vector<double>* eps;
    MonotonicClock::Duration time{};
  };
  std::vector<Contender> contenders = {
      {&cluster, &result.cluster_loss, &result.cluster_eps},
      {&shared, &result.cluster_shm_loss, &result.cluster_shm_eps},
      {&whole, &result.cluster_whole_loss, &result.cluster_whole_eps},
      {&local, &result.local_loss, &result.local_eps}};
  const StepPhases phases_before = *shared.phases();
  for (int rep = 0; rep < plan.repeats; ++rep) {
    for (Contender& c : contenders) c.time = {};
    for (int slice = 0; slice < plan.slices; ++slice) {
      for (size_t turn = 0; turn < contenders.size(); ++turn) {
        Contender& c = contenders[(rep + slice + turn) % contenders.size()];
        const ThreadCpu cpu_before = SampleThreadCpu();
        const auto start = SteadyClock().Now();
        *c.loss = c.trainer->Run(data.batches, steps_per_slice);
        c.time += SteadyClock().Now() - start;
        if (c.trainer == &shared) {
          AddThreadCpu(SampleThreadCpu(), cpu_before, &result.shm_thread_cpu);
        }
      }
    }
    const double examples = static_cast<double>(result.steps_per_repeat * batch_size);
    for (Contender& c : contenders) c.eps->push_back(examples / Seconds(c.time));
  }
  result.shm_phases = shared.phases()->Since(phases_before);
  const int64_t steps = warmup_steps + plan.repeats * result.steps_per_repeat;
  CHECK_EQ(cluster.global_step(), steps);
  CHECK_EQ(shared.global_step(), steps);
  CHECK_EQ(whole.global_step(), steps);
  return result;
}

}  // namespace pst
