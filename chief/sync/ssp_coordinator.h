// SspCoordinator: the chief's half of bounded-staleness training
// (--mode=ssp, docs/SSP.md) that talks to the workers. It answers their clock
// requests with a StalenessGate's decisions (scheduler/staleness_gate.h),
// parks the requests of the workers told to wait and answers them once they
// may go,
// and writes every grant to the clock log (docs/FORMATS.md), from which the
// bound can be checked after the run.
//
// Liveness comes with each request: the workers that are gone (they left, or
// the chief declared them dead) stop being counted. A parked worker repeats
// its request every second (ChiefLink::AwaitClock), so a death declared
// while it waits lets it go within a second.
//
// Thread safety: all methods are thread-safe.
#ifndef PST_CHIEF_SYNC_SSP_COORDINATOR_H_
#define PST_CHIEF_SYNC_SSP_COORDINATOR_H_

#include <memory>
#include <ostream>
#include <vector>

#include "chief/sync/parked_replies.h"
#include "common/mutex.h"
#include "scheduler/staleness_gate.h"
#include "transport/request_context.h"

namespace pst {

// The reply to a clock request: go (`clock`: the worker's clock as the
// chief counts it), or -1 (state Stopping): stop.
OutgoingMessage ClockReply(int64_t clock);

class SspCoordinator {
 public:
  // `bound`: --staleness_bound (>= 0). `replies` (borrowed) sends the
  // replies of parked requests. `log` (null: none) gets the clock log.
  SspCoordinator(int num_workers, int64_t bound, int64_t train_steps, ReplySender* replies,
                 std::unique_ptr<std::ostream> log);

  // `worker` has completed `completed` steps and asks to start the next
  // one: the reply now, or none (the request is parked). `gone[i]`: worker
  // i left or was declared dead (ChiefState::gone_worker_mask()).
  OutgoingMessage HandleClockRequest(int worker, int64_t completed, const std::vector<bool>& gone,
                                     RequestContext& context);
  // `worker` said goodbye after a push that took the global step to
  // `global_step`. Once that is --train_steps every worker is done after its
  // next push, so the gate closes: the parked are told to stop rather than
  // train a step too many.
  void WorkerLeft(int worker, int64_t global_step);
  // No more steps: the parked, and every later request, are told to stop.
  void Close();

 private:
  // Logs the grants (under mu_, so that the log keeps their order).
  void Log(int worker, int64_t clock, int64_t slowest) REQUIRES(mu_);
  // The answers to the parked requests of `grants`: go, or stop.
  std::vector<Answer> Answers(const std::vector<ClockGrant>& grants, bool stop) REQUIRES(mu_);

  const int64_t train_steps_;
  ReplySender* replies_;
  Mutex mu_;
  StalenessGate gate_ GUARDED_BY(mu_);
  ParkedReplies parked_ GUARDED_BY(mu_);
  std::unique_ptr<std::ostream> log_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_CHIEF_SYNC_SSP_COORDINATOR_H_
