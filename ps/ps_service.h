// PsService: answers the requests a ps task receives (init, pull, push,
// status, shutdown) from its VariableStore. Stateless apart from the store.
#ifndef PST_PS_PS_SERVICE_H_
#define PST_PS_PS_SERVICE_H_

#include <functional>

#include "ps/step_notifier.h"
#include "ps/variable_store.h"
#include "transport/server.h"

namespace pst {

struct PsServiceOptions {
  int shard = 0;
  // Where checkpoint parts go: <checkpoint_dir>/<checkpoint name>/ps-<shard>.part.
  // Empty: this ps refuses to save or restore.
  std::string checkpoint_dir;
};

class PsService {
 public:
  // `server` is borrowed: the service adopts the chief's cluster id on it at
  // init, reads its byte counters and stops it on shutdown.
  // `notifier` (borrowed; may be null when no chief is configured) hears
  // about completed sync steps.
  PsService(RpcServer* server, StepNotifier* notifier, PsServiceOptions options = {})
      : server_(server), notifier_(notifier), options_(std::move(options)) {}

  OutgoingMessage Handle(const ReceivedMessage& request);
  VariableStore& store() { return store_; }

 private:
  OutgoingMessage HandleInit(const ReceivedMessage& request);
  OutgoingMessage HandlePull(const ReceivedMessage& request);
  OutgoingMessage HandlePush(const ReceivedMessage& request);
  OutgoingMessage HandleStatus();
  OutgoingMessage HandleSave(const ReceivedMessage& request);
  OutgoingMessage HandleRestore(const ReceivedMessage& request);
  // This shard's part file of the checkpoint the request names.
  StatusOr<std::string> PartPath(const ReceivedMessage& request) const;

  OutgoingMessage PushReply(const PushOutcome& outcome);

  RpcServer* server_;
  StepNotifier* notifier_;
  const PsServiceOptions options_;
  VariableStore store_;
};

}  // namespace pst

#endif  // PST_PS_PS_SERVICE_H_
