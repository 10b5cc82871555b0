// TokenQueue: which worker trains which sync step (DESIGN section 7).
//
// Tokens are released per step: when step s opens, every worker may take
// one token for s. A worker that already holds the token of the current step
// waits until the next step opens; a worker asking late gets the newest step
// at once, never an old one. Nothing is handed out before the first step
// opens.
//
// Hand-out is idempotent per worker and step: each request says which step
// the worker last received a token for, so a request re-sent because its
// answer was lost or went to an abandoned request id gets the same step
// again.
//
// A plain object: requests in, decisions out; it holds no connection (the
// caller keeps each waiting worker's request and answers it with the step
// a later call grants). Not thread-safe: SyncSteps serializes the calls.
#ifndef PST_SCHEDULER_TOKEN_QUEUE_H_
#define PST_SCHEDULER_TOKEN_QUEUE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace pst {

// The answer to a token request.
struct TokenAnswer {
  enum class Verdict { kGo, kWait, kStop };
  Verdict verdict = Verdict::kWait;
  int64_t step = -1;  // kGo: the step to train
};

class TokenQueue {
 public:
  explicit TokenQueue(int num_workers);

  // `worker` asks for a token; `last_received` is the step of the last
  // token it received (-1: none). The current step is granted unless the
  // worker received it from this queue: by its own account and, since the
  // steps after a Reset() repeat, by the queue's. kWait: the worker waits
  // (this request replaces an older one it waited with) and its step comes
  // from Advance(), Reset() or Close(). kStop once closed.
  TokenAnswer Take(int worker, int64_t last_received);

  // Opens `step` (> the current one): returns the waiting workers, each
  // granted `step`.
  std::vector<int> Advance(int64_t step);
  // Moves to `step` even backwards (after a restore) and forgets which
  // tokens were taken: returns the waiting workers, granted `step`.
  std::vector<int> Reset(int64_t step);
  // No more tokens: returns every waiting worker (to be told to stop).
  std::vector<int> Close();

  // The step whose tokens are out; empty before the first opens.
  std::optional<int64_t> current_step() const { return step_; }

 private:
  // The waiting workers, granted `step` (-1: stop), no longer waiting.
  std::vector<int> TakeWaiting(int64_t step);

  std::optional<int64_t> step_;
  bool closed_ = false;
  std::vector<int64_t> taken_;  // the last step granted each worker
  std::vector<bool> waiting_;
};

}  // namespace pst

#endif  // PST_SCHEDULER_TOKEN_QUEUE_H_
