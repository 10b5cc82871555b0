// The chief task: starts the cluster (waits for every ps, initializes the
// variables), opens training, follows the global step, evaluates, writes
// metrics, and at --train_steps stops workers and ps and prints the report.
// It never carries gradient or parameter bytes on the training path.
//
// Its pieces, each with one job: ShardKeeper (the ps alive and consistent:
// start-up, probes, recovery, shutdown), ChiefCheckpoints (the checkpoint
// cadence), ClusterEvaluator (the model's test loss and accuracy),
// ChiefReporter (Step lines, progress, report, metrics, TensorBoard,
// Prometheus) and ChiefTimeline (the run from training opened to its end),
// composed in chief_task.cc.
#ifndef PST_CHIEF_CHIEF_TASK_H_
#define PST_CHIEF_CHIEF_TASK_H_

#include <atomic>

#include "chief/chief_options.h"
#include "chief/chief_timeline.h"
#include "common/clock.h"
#include "common/status.h"
#include "transport/transport.h"

namespace pst {

// Runs the job to --train_steps. The first SIGINT/SIGTERM during training
// saves a checkpoint (with checkpoint_dir), stops every task and returns
// Aborted naming the step saved; the signal goes to `*stop_signal` (0: none;
// may be null). A repeat of the signal within 2 s is the same request (see
// common/stop_signals.h); a later one exits the process at once.
Status RunChief(const ChiefOptions& options, int* stop_signal = nullptr);

// The same over `transport` (an in-process one in tests), until done or
// `stop` is set: the chief's decisions read `clock`, and it `pause`s between
// two looks at the cluster (a test moves a FakeClock there). RunChief makes
// a ZeroMQ transport, reads SteadyClock(), sleeps, and sets `stop` on
// SIGINT/SIGTERM.
Status RunChiefOn(const ChiefOptions& options, Transport& transport, const MonotonicClock& clock,
                  const ChiefTimeline::Pause& pause, const std::atomic<bool>& stop);

// The chief's exit status: 0 for OK; 128 + the signal for a run a signal
// stopped, as a shell reports it (Kubernetes' ExitCode restart policy retries
// those, and the job resumes from the checkpoint); 1 for any other failure.
int ChiefExitCode(const Status& status, int stop_signal);

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_TASK_H_
