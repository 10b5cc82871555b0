// PsService: answers the requests a ps task receives (init, pull, push,
// status, shutdown) from its VariableStore. Stateless apart from the store.
#ifndef PST_PS_PS_SERVICE_H_
#define PST_PS_PS_SERVICE_H_

#include <functional>

#include "ps/step_notifier.h"
#include "ps/variable_store.h"
#include "transport/server.h"

namespace pst {

class PsService {
 public:
  // `server` is borrowed: the service adopts the chief's cluster id on it at
  // init, reads its byte counters and stops it on shutdown.
  // `notifier` (borrowed; may be null when no chief is configured) hears
  // about completed sync steps.
  PsService(RpcServer* server, StepNotifier* notifier)
      : server_(server), notifier_(notifier) {}

  OutgoingMessage Handle(const ReceivedMessage& request);
  VariableStore& store() { return store_; }

 private:
  OutgoingMessage HandleInit(const ReceivedMessage& request);
  OutgoingMessage HandlePull(const ReceivedMessage& request);
  OutgoingMessage HandlePush(const ReceivedMessage& request);
  OutgoingMessage HandleStatus();

  OutgoingMessage PushReply(const PushOutcome& outcome);

  RpcServer* server_;
  StepNotifier* notifier_;
  VariableStore store_;
};

}  // namespace pst

#endif  // PST_PS_PS_SERVICE_H_
