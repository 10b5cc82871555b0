// HeartbeatSender: tells the chief every `interval` that this task is alive
// (DESIGN section 8), from a thread of its own, on a socket of its own, so
// a long training step or a blocked request never delays a heartbeat.
//
// Fire-and-forget: replies are drained and ignored. A send that times out
// (the chief is down or restarting) is logged once, and again when the
// chief can be reached again.
//
// Thread safety: constructed and destroyed by one thread; the sending
// thread runs between the two.
#ifndef PST_TRANSPORT_HEARTBEAT_SENDER_H_
#define PST_TRANSPORT_HEARTBEAT_SENDER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "transport/channel.h"

namespace pst {

class HeartbeatSender {
 public:
  // `context` is borrowed and must outlive the sender. `cluster_id` is
  // asked before each heartbeat (a ps learns its id at init).
  HeartbeatSender(zmq::context_t& context, ChannelOptions chief,
                  std::chrono::milliseconds interval, std::function<uint64_t()> cluster_id);
  // Stops the thread: at most one send timeout (the interval) later.
  ~HeartbeatSender();

  HeartbeatSender(const HeartbeatSender&) = delete;
  HeartbeatSender& operator=(const HeartbeatSender&) = delete;

 private:
  void Loop();

  const std::chrono::milliseconds interval_;
  const std::function<uint64_t()> cluster_id_;
  Channel channel_;  // used by the thread only
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_HEARTBEAT_SENDER_H_
