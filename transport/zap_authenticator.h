// ZapAuthenticator: ZeroMQ's authentication protocol (ZAP, RFC 27) handler
// for one context. It accepts a CURVE client only when the client's public
// key is the cluster's; everything else is refused, and logged.
//
// One per zmq context, created before any CURVE server socket of that
// context binds; it owns a thread that it starts and joins.
#ifndef PST_TRANSPORT_ZAP_AUTHENTICATOR_H_
#define PST_TRANSPORT_ZAP_AUTHENTICATOR_H_

#include <atomic>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "transport/curve.h"

namespace pst {

class ZapAuthenticator {
 public:
  // `context` is borrowed and must outlive the authenticator.
  ZapAuthenticator(zmq::context_t& context, const CurveKeys& cluster_keys);
  ~ZapAuthenticator();

  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

 private:
  void Serve(zmq::socket_t& socket);

  std::string allowed_key_;  // 32 bytes, binary
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_ZAP_AUTHENTICATOR_H_
