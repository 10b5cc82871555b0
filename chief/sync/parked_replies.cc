#include "chief/sync/parked_replies.h"

namespace pst {

void ParkedReplies::Take(const std::vector<int>& workers, const OutgoingMessage& reply,
                         std::vector<Answer>& out) {
  for (int w : workers) {
    if (!parked_[w]) continue;
    out.emplace_back(std::move(*parked_[w]), reply);
    parked_[w].reset();
  }
}

void SendAnswers(ReplySender* sender, std::vector<Answer> answers) {
  for (Answer& a : answers) sender->SendDeferred(std::move(a.first), a.second);
}

}  // namespace pst
