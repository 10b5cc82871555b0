#include "bench/transport/training_comparison.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "bench/bench_timing.h"
#include "bench/check_ok.h"
#include "bench/transport/trainers.h"
#include "bench/transport/training_batches.h"
#include "common/clock.h"
#include "model/initializer.h"
#include "model/model_zoo.h"

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

  ClusterTrainer cluster(options.model, initial, options.ps_threads);
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
  const int64_t steps_per_slice =
      std::max<int64_t>(1, std::llround(plan.seconds_per_repeat / step_s / plan.slices));
  result.steps_per_repeat = steps_per_slice * plan.slices;

  // Like the transport: each repeat alternates the two in slices.
  for (int rep = 0; rep < plan.repeats; ++rep) {
    MonotonicClock::Duration cluster_time{}, local_time{};
    auto run = [&](Trainer& trainer, float* loss, MonotonicClock::Duration* time) {
      const auto start = SteadyClock().Now();
      *loss = trainer.Run(data.batches, steps_per_slice);
      *time += SteadyClock().Now() - start;
    };
    for (int slice = 0; slice < plan.slices; ++slice) {
      if ((rep + slice) % 2 == 0) {
        run(cluster, &result.cluster_loss, &cluster_time);
        run(local, &result.local_loss, &local_time);
      } else {
        run(local, &result.local_loss, &local_time);
        run(cluster, &result.cluster_loss, &cluster_time);
      }
    }
    const double examples = static_cast<double>(result.steps_per_repeat * batch_size);
    result.cluster_eps.push_back(examples / Seconds(cluster_time));
    result.local_eps.push_back(examples / Seconds(local_time));
  }
  CHECK_EQ(cluster.global_step(), warmup_steps + plan.repeats * result.steps_per_repeat);
  return result;
}

}  // namespace pst
