// What a request handler is given with each request, and how a reply that
// could not be given at once is sent later. No transport types: the return
// address is opaque bytes that only the transport that made it reads.
#ifndef PST_TRANSPORT_REQUEST_CONTEXT_H_
#define PST_TRANSPORT_REQUEST_CONTEXT_H_

#include <cstdint>
#include <string>
#include <utility>

#include "transport/message.h"

namespace pst {

// The return address of a request whose reply is sent later.
struct DeferredReply {
  std::string address;  // opaque: the connection the request came on
  uint64_t request_id = 0;
};

// Given to the handler with each request.
class RequestContext {
 public:
  RequestContext(std::string address, uint64_t request_id, std::string peer_address = "")
      : address_(std::move(address)),
        request_id_(request_id),
        peer_address_(std::move(peer_address)) {}
  // Takes the request's return address: the handler's return value is then
  // ignored and the reply must go through ReplySender::SendDeferred.
  DeferredReply Defer();
  bool deferred() const { return deferred_; }
  // The numeric IP address the request came from, as the kernel saw it
  // ("127.0.0.1"; libzmq's "Peer-Address"); empty when unknown.
  const std::string& peer_address() const { return peer_address_; }

 private:
  std::string address_;
  uint64_t request_id_;
  std::string peer_address_;
  bool deferred_ = false;
};

// Sends the replies of deferred requests.
class ReplySender {
 public:
  virtual ~ReplySender() = default;
  // Sends the reply of a deferred request. Thread-safe.
  virtual void SendDeferred(DeferredReply to, const OutgoingMessage& reply) = 0;
};

}  // namespace pst

#endif  // PST_TRANSPORT_REQUEST_CONTEXT_H_
