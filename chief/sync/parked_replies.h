// ParkedReplies: the requests of the workers a scheduler decision told to
// wait (sync tokens, ssp clocks), one per worker, each answered once a
// later decision lets its worker go. A worker's newer request replaces its
// parked one: the worker gave that one up.
//
// Not thread-safe: the coordinator that owns it takes a parked request under
// the same lock as the decision that answers it, so that a late answer can
// never reach a newer request.
#ifndef PST_CHIEF_SYNC_PARKED_REPLIES_H_
#define PST_CHIEF_SYNC_PARKED_REPLIES_H_

#include <optional>
#include <utility>
#include <vector>

#include "transport/request_context.h"

namespace pst {

// A parked request and the reply it gets.
using Answer = std::pair<DeferredReply, OutgoingMessage>;

class ParkedReplies {
 public:
  explicit ParkedReplies(int num_workers) : parked_(num_workers) {}

  // Parks `worker`'s request: its handler's return value is ignored.
  void Park(int worker, RequestContext& context) { parked_[worker] = context.Defer(); }
  // Appends the answers to `workers`' parked requests, each `reply`, to
  // `out`, and forgets them; a worker with none parked is skipped.
  void Take(const std::vector<int>& workers, const OutgoingMessage& reply,
            std::vector<Answer>& out);

 private:
  std::vector<std::optional<DeferredReply>> parked_;
};

// Sends the answers taken (outside the coordinator's lock); `sender` is
// used only when there is one.
void SendAnswers(ReplySender* sender, std::vector<Answer> answers);

}  // namespace pst

#endif  // PST_CHIEF_SYNC_PARKED_REPLIES_H_
