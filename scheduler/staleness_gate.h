// StalenessGate: who may start a step under bounded staleness (stale
// synchronous parallel, --mode=ssp --staleness_bound=s).
//
// A worker's clock is the number of steps it has completed. A worker at
// clock c may start its next step when c <= slowest + s, where slowest is
// the least clock of the counted workers; otherwise it waits until the slowest clock moves, a
// worker stops being counted, or the gate closes. s = 0 is lock-step (bulk-synchronous); a large s
// is async.
//
// Counted: every worker of the cluster counts from the start, at clock 0, so
// that s = 0 is lock-step from the first step (like sync with every worker
// needed, the others wait for a worker that has not come yet, at most s
// steps). Leave() (the worker is done, or the chief declared it dead) stops
// counting it: a lost worker holds nobody back once the caller says so.
//
// Clocks never go backwards and a returning worker does not freeze the
// others: the gate adds an offset to the count each worker reports.
//  - A worker that counts again (its first request after Leave) is raised to
//    the slowest counted clock: it missed those steps and must not make the
//    others wait while it does them again.
//  - A count lower than the last one the worker reported means it restarted
//    (its count starts again at 0): its clock stays where it was.
//
// A plain object: requests in, decisions out; it holds no connection (the
// caller keeps each waiting worker's request and answers it when a decision
// lets the worker go). Not thread-safe: SspCoordinator serializes the calls.
#ifndef PST_SCHEDULER_STALENESS_GATE_H_
#define PST_SCHEDULER_STALENESS_GATE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace pst {

// A waiting worker that may now go: `worker` at `clock` starts its next
// step; `slowest`: the slowest counted clock when it was let go.
struct ClockGrant {
  int worker = 0;
  int64_t clock = 0;
  int64_t slowest = 0;
};

// The answer to a request.
struct Admission {
  enum class Verdict { kGo, kWait, kStop };
  Verdict verdict = Verdict::kWait;
  // kGo: the worker's clock and the slowest counted clock.
  int64_t clock = 0;
  int64_t slowest = 0;
  // Waiting workers that the asking worker's clock let go.
  std::vector<ClockGrant> released;
};

class StalenessGate {
 public:
  // `bound`: s >= 0.
  StalenessGate(int num_workers, int64_t bound);

  // `worker` (in 0..num_workers-1) has completed `completed` steps and asks
  // to start the next one. kWait: the worker waits (this request replaces
  // an older one it waited with) until a later call lets it go. kStop once
  // closed.
  Admission Ask(int worker, int64_t completed);
  // `worker` is done or declared dead: it is no longer counted and no longer
  // waits. Returns the waiting workers that go now.
  std::vector<ClockGrant> Leave(int worker);
  // No more steps: returns every waiting worker (to be told to stop).
  std::vector<ClockGrant> Close();

  // The slowest counted clock; nullopt when no worker is counted (all left).
  std::optional<int64_t> slowest() const;

 private:
  struct WorkerClock {
    bool counted = true;
    int64_t reported = 0;  // the last count the worker sent
    int64_t offset = 0;    // clock = reported + offset
    bool waiting = false;
    int64_t clock() const { return reported + offset; }
  };

  // The waiting workers that may go now, no longer waiting.
  std::vector<ClockGrant> Release();

  const int64_t bound_;
  bool closed_ = false;
  std::vector<WorkerClock> workers_;
};

}  // namespace pst

#endif  // PST_SCHEDULER_STALENESS_GATE_H_
