// PsService: answers the requests a ps task receives (init, pull, push,
// status, shutdown) from its VariableStore. Stateless apart from the store.
#ifndef PST_PS_PS_SERVICE_H_
#define PST_PS_PS_SERVICE_H_

#include <functional>

#include "ps/variable_store.h"
#include "transport/server.h"

namespace pst {

class PsService {
 public:
  // `server` is borrowed: the service adopts the chief's cluster id on it at
  // init, reads its byte counters and stops it on shutdown.
  explicit PsService(RpcServer* server) : server_(server) {}

  OutgoingMessage Handle(const ReceivedMessage& request);
  VariableStore& store() { return store_; }

 private:
  OutgoingMessage HandleInit(const ReceivedMessage& request);
  OutgoingMessage HandlePull(const ReceivedMessage& request);
  OutgoingMessage HandlePush(const ReceivedMessage& request);
  OutgoingMessage HandleStatus();

  RpcServer* server_;
  VariableStore store_;
};

}  // namespace pst

#endif  // PST_PS_PS_SERVICE_H_
