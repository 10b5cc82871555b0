// ChiefService: answers workers' join requests and training reports.
#ifndef PST_SCHEDULER_CHIEF_SERVICE_H_
#define PST_SCHEDULER_CHIEF_SERVICE_H_

#include "scheduler/chief_state.h"
#include "transport/message.h"

namespace pst {

class ChiefService {
 public:
  // `state` is borrowed and must outlive the service.
  ChiefService(ChiefState* state, int num_workers)
      : state_(state), num_workers_(num_workers) {}

  OutgoingMessage Handle(const ReceivedMessage& request);

 private:
  OutgoingMessage StateReply(wire::MessageType type) const;

  ChiefState* state_;
  const int num_workers_;
};

}  // namespace pst

#endif  // PST_SCHEDULER_CHIEF_SERVICE_H_
