// What a server is told: where it listens, who it is, what it accepts.
#ifndef PST_TRANSPORT_SERVER_OPTIONS_H_
#define PST_TRANSPORT_SERVER_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/curve.h"
#include "transport/message.h"

namespace pst {

inline constexpr size_t kSlowestPeerBytesPerSecond = size_t{10} << 20;

struct ServerOptions {
  std::string name;      // "ps:0", for logs and error messages
  std::string endpoint;  // "tcp://127.0.0.1:2222"
  wire::Role role = wire::Role::Unknown;
  int32_t index = 0;
  // Counted with FrameCost as the frames are taken from ZeroMQ; ZeroMQ
  // itself limits each frame to this (it holds a message until its last
  // frame has arrived, see server.cc).
  size_t max_message_bytes = size_t{1} << 30;
  // A connection is dropped, with the incomplete message it holds, when it
  // has not finished its handshake within peer_timeout, or when it leaves a
  // heartbeat (sent every peer_timeout / 2) unanswered for peer_timeout
  // plus the time the largest frame takes at kSlowestPeerBytesPerSecond
  // (the answer queues behind the frame being sent).
  std::chrono::milliseconds peer_timeout{10000};
  int num_threads = 2;
  // Requests for which this returns true are served on the I/O thread
  // itself, in arrival order, without the two thread hand-offs (to a
  // handler thread and back) of the others: only for requests that are
  // quick and never block (a ps's pulls). Unset: every request goes to a
  // handler thread. Called on the I/O thread for every verified request.
  std::function<bool(const ReceivedMessage&)> serve_inline;
  // Cluster id of the server; 0 = not yet known (accepts any, see
  // set_cluster_id). Once known, requests from other clusters are refused,
  // except those of `open_types` that carry id 0 (a worker joining).
  uint64_t cluster_id = 0;
  std::vector<wire::MessageType> open_types;
  // CURVE: encrypt, and accept only clients holding the cluster's key.
  std::optional<CurveKeys> curve;
};

// OK when `request` may be served by a server of `options` whose cluster
// id is now `cluster_id`; else PermissionDenied naming only the sender's id.
Status CheckClusterId(const ServerOptions& options, uint64_t cluster_id,
                      const ReceivedMessage& request);

}  // namespace pst

#endif  // PST_TRANSPORT_SERVER_OPTIONS_H_
