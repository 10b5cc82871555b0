// HeartbeatSender: tells the chief every `interval` that this task is alive
// (DESIGN section 8), from a thread of its own, on a socket of its own, so
// a long training step or a blocked request never delays a heartbeat.
//
// Fire-and-forget: replies are discarded. A send that times out (the
// chief's queue is full) is logged once, and again when one gets through.
//
// Thread safety: constructed and destroyed by one thread.
#ifndef PST_TRANSPORT_HEARTBEAT_SENDER_H_
#define PST_TRANSPORT_HEARTBEAT_SENDER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/periodic_thread.h"
#include "transport/transport.h"

namespace pst {

class HeartbeatSender {
 public:
  // `transport` is borrowed and must outlive the sender. `cluster_id` is
  // asked before each heartbeat (a ps learns its id at init).
  HeartbeatSender(Transport& transport, ChannelOptions chief, std::chrono::milliseconds interval,
                  std::function<uint64_t()> cluster_id);

 private:
  void Send();

  const std::function<uint64_t()> cluster_id_;
  const std::unique_ptr<Connection> channel_;  // used by the periodic thread only
  bool failing_ = false;                       // the last send failed; periodic thread only
  PeriodicThread thread_;                      // last: starts once the members above exist
};

}  // namespace pst

#endif  // PST_TRANSPORT_HEARTBEAT_SENDER_H_
