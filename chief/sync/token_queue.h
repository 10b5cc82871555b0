// TokenQueue: the chief's sync token queue (DESIGN section 7).
//
// Tokens are released per step: when step s opens, every worker may take
// one token for s. A worker that already holds the token of the current step
// waits (its request is parked) until the next step opens; a worker asking
// late gets the newest step at once, never an old one. Nothing is handed out
// before Open().
//
// Hand-out is idempotent per worker and step: each request says which step
// the worker last received a token for, so a request re-sent because its
// answer was lost or went to an abandoned request id gets the same step
// again.
//
// Thread safety: all methods are thread-safe.
#ifndef PST_CHIEF_SYNC_TOKEN_QUEUE_H_
#define PST_CHIEF_SYNC_TOKEN_QUEUE_H_

#include <optional>
#include <vector>

#include "common/mutex.h"
#include "transport/request_context.h"

namespace pst {

struct TokenGrant {
  DeferredReply to;
  int64_t step;
};

class TokenQueue {
 public:
  explicit TokenQueue(int num_workers);

  // The step whose token `worker` gets now, or nullopt when it must wait:
  // then the request is parked (replacing an older parked one of the same
  // worker) and comes back from Advance() or Close(). `last_received` is the
  // step of the last token the worker received (-1: none). The current step
  // is granted unless the worker received it from this queue: by its own
  // account and, since the steps after a Reset() repeat, by the queue's.
  std::optional<int64_t> TakeOrPark(int worker, int64_t last_received, RequestContext& context);

  // Opens `step` (> the current one): returns the parked requests, each
  // granted `step`.
  std::vector<TokenGrant> Advance(int64_t step);

  // Moves to `step` even backwards (after a restore) and forgets which
  // tokens were taken: returns the parked requests, granted `step`.
  std::vector<TokenGrant> Reset(int64_t step);
  // No more tokens: returns every parked request (to be told to stop).
  std::vector<TokenGrant> Close();

  std::optional<int64_t> current_step() const;

 private:
  std::vector<TokenGrant> TakeParked(int64_t step) REQUIRES(mu_);

  mutable Mutex mu_;
  std::optional<int64_t> step_ GUARDED_BY(mu_);  // empty before Open
  bool closed_ GUARDED_BY(mu_) = false;
  std::vector<int64_t> taken_ GUARDED_BY(mu_);  // last step granted each worker
  std::vector<std::optional<DeferredReply>> parked_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_CHIEF_SYNC_TOKEN_QUEUE_H_
