// Section 3 of bench_transport: examples/s of 1 ps + 1 worker against the
// same model trained in one process, the same batches in the same order.
#ifndef PST_BENCH_TRANSPORT_TRAINING_COMPARISON_H_
#define PST_BENCH_TRANSPORT_TRAINING_COMPARISON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bench/transport/thread_cpu.h"
#include "bench/transport/timing_plan.h"
#include "worker/step_phases.h"

namespace pst {

struct TrainingOptions {
  std::string model;
  int batch_size = 0;
  int batches = 0;  // distinct batches, cycled
  int ps_threads = 0;
};

struct TrainingResult {
  std::string source;  // of the batches
  int64_t steps_per_repeat = 0;
  // Examples/s per repeat: 1 ps + 1 worker over TCP with the push
  // acknowledged before the next step (--shm=off --overlap=off); the same
  // through shared memory with the gradients pushed as backprop makes them
  // and acknowledged during the next step (the defaults); the same with
  // each step's push sent whole once computed (--push_bucket_bytes larger
  // than the model); one process.
  std::vector<double> cluster_eps, cluster_shm_eps, cluster_whole_eps, local_eps;
  // Of the last step.
  float cluster_loss = 0, cluster_shm_loss = 0, cluster_whole_loss = 0, local_loss = 0;
  // The defaults' trainer (shared memory, streamed), over the timed
  // repeats: where its training thread's steps went, and every thread's
  // CPU time by name.
  StepPhases shm_phases;
  ThreadCpu shm_thread_cpu;
};

// A warm-up of at least 5 steps and `plan.warmup_s` also gives the step time
// that sizes the timed repeats.
TrainingResult RunTrainingComparison(const TrainingOptions& options, const TimingPlan& plan);

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_TRAINING_COMPARISON_H_
