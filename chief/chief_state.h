// ChiefState: what the chief's request handler (worker joins and reports)
// and its main loop share: the cluster state and what each worker said.
//
// Thread safety: all methods are thread-safe.
#ifndef PST_CHIEF_CHIEF_STATE_H_
#define PST_CHIEF_CHIEF_STATE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "schema/messages_generated.h"

namespace pst {

struct WorkerInfo {
  bool heard = false;  // has asked to join or sent a heartbeat, ever
  // Asked to join before training opened and has not had the answer since.
  bool waiting = false;
  bool joined = false;
  bool left = false;
  bool dead = false;  // silent for longer than the heartbeat timeout
  int64_t reports = 0;
  int64_t examples = 0;
  // The global step of its last report (async: after its last push was
  // acknowledged); -1 before its first report since it joined.
  int64_t reported_step = -1;
  MonotonicClock::TimePoint last_seen;
};

struct PsInfo {
  bool seen = false;  // has sent a heartbeat: followed from then on
  bool dead = false;  // silent for longer than the heartbeat timeout
  MonotonicClock::TimePoint last_seen;
};

// Reports received since the last TakeWindow().
struct ReportWindow {
  int64_t reports = 0;
  double mean_loss = 0;
  double mean_step_ms = 0;
  int64_t examples = 0;
  int64_t epoch = 0;  // of the newest report
  int64_t batch = 0;
  int64_t batches_per_epoch = 0;
};

class ChiefState {
 public:
  // `job`: the chief's Job::Describe(), which every joining worker must match.
  // `clock` (borrowed) times the silences.
  ChiefState(uint64_t placement_hash, int64_t train_steps, int num_workers, int num_ps,
             std::string job = "", const MonotonicClock& clock = SteadyClock());

  uint64_t placement_hash() const { return placement_hash_; }
  const std::string& job() const { return job_; }
  int64_t train_steps() const { return train_steps_; }

  wire::ClusterState state() const;
  void set_state(wire::ClusterState state);

  // A join request from `worker`, answered with state(): before training
  // opens the worker waits (and asks again); while training it joins; once
  // stopping it is told training is over, and leaves without training.
  // Returns the state to answer with.
  wire::ClusterState RecordJoin(int worker);
  // Counts a worker heard from without joining as joined: it joined this
  // chief's previous run (a restarted chief). True when it was not joined.
  bool Adopt(int worker);
  void RecordSeen(int worker);
  // A heartbeat from a ps or a worker (`role` is Ps or Worker).
  void RecordHeartbeat(wire::Role role, int index);
  // `step`: the global step the report carries (the request header's).
  void RecordReport(int worker, int64_t step, const wire::Report& report);

  ReportWindow TakeWindow();
  // "" while every reported training loss was finite; else what the first
  // non-finite one was ("worker:1 reported a training loss of nan").
  std::string non_finite_loss() const;
  // True when every worker that joined has left (or was declared dead), and
  // none that asked to join before training opened still waits for the
  // answer: at the end the chief waits for both, so that a worker a moment
  // late hears that training is over rather than asking a chief that is gone.
  // Never true within an AwaitEarlierWorkersFor window.
  bool EveryWorkerDone() const;
  // True when every worker of the cluster has spoken at least once. At the
  // end the chief waits a while (ChiefOptions::late_worker_grace) for those
  // that have not: a worker that starts after training ended then hears
  // that it is over and exits 0, instead of waiting --join_timeout_ms for a
  // chief that is gone and failing.
  bool EveryWorkerHeardFrom() const;
  // The live workers (joined, neither gone nor dead) whose last report
  // carries a global step below `step`. Async: an empty answer for
  // --train_steps means every live worker holds at the end with its last
  // push acknowledged, so no push is on its way to a shard.
  std::vector<int> WorkersShortOf(int64_t step) const;
  // Forgets every worker's reported step (the cluster went back to an
  // earlier step: what they reported is no longer where they are).
  void ForgetReportedSteps();
  // A restarted chief knows the workers still running from the run before
  // it only once they speak (Adopt), which each does within a heartbeat
  // interval. For `window` from now, EveryWorkerDone() is false, so that a
  // chief that finds training already over does not stop the ps under a
  // worker it has not heard from yet (which would then wait in vain for
  // the cluster to come back, and fail).
  void AwaitEarlierWorkersFor(std::chrono::milliseconds window);
  // Declares dead the tasks silent for longer than `timeout`: workers that
  // joined (or wait to) and did not leave, ps that sent a heartbeat. Returns their names
  // ("worker:1", "ps:0"). A task heard from again is alive again.
  std::vector<std::string> DeclareSilentTasksDead(std::chrono::milliseconds timeout);
  // The chief itself was held (SIGSTOP, a starved process): the heartbeats
  // sent meanwhile are still queued, unread. Silences count from now, not
  // from the last heartbeat read, so waking up declares no one dead.
  void ExcuseSilences();
  int64_t total_examples() const;
  // Workers that joined and are neither gone nor declared dead.
  int live_workers() const;
  // By worker: element i is true when worker i left or was declared dead
  // (and has not joined again since).
  std::vector<bool> gone_worker_mask() const;
  // Ps that sent a heartbeat and are not declared dead.
  int live_ps() const;
  // How many times a task was declared dead since the chief started.
  int64_t deaths() const;

 private:
  const MonotonicClock& clock_;
  const uint64_t placement_hash_;
  const std::string job_;
  const int64_t train_steps_;

  mutable Mutex mu_;
  wire::ClusterState state_ GUARDED_BY(mu_) = wire::ClusterState::Starting;
  std::vector<WorkerInfo> workers_ GUARDED_BY(mu_);
  std::vector<PsInfo> ps_ GUARDED_BY(mu_);
  int64_t deaths_ GUARDED_BY(mu_) = 0;
  MonotonicClock::TimePoint earlier_workers_until_ GUARDED_BY(mu_);  // see AwaitEarlierWorkersFor
  MonotonicClock::TimePoint silences_count_from_ GUARDED_BY(mu_);    // see ExcuseSilences
  // The open report window.
  double loss_sum_ GUARDED_BY(mu_) = 0;
  double step_ms_sum_ GUARDED_BY(mu_) = 0;
  ReportWindow window_ GUARDED_BY(mu_);
  int64_t total_examples_ GUARDED_BY(mu_) = 0;
  std::string non_finite_loss_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_STATE_H_
