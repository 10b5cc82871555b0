// What a client connection is told about its peer and itself.
#ifndef PST_TRANSPORT_CHANNEL_OPTIONS_H_
#define PST_TRANSPORT_CHANNEL_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "schema/messages_generated.h"
#include "transport/curve.h"

namespace pst {

struct ChannelOptions {
  std::string peer_name;  // "ps:1", used in error messages
  std::string endpoint;   // "tcp://127.0.0.1:2222"
  uint64_t cluster_id = 0;
  wire::Role role = wire::Role::Client;
  int32_t index = 0;
  int rpc_timeout_ms = 30000;
  size_t max_message_bytes = size_t{1} << 30;
  std::optional<CurveKeys> curve;  // the cluster's keys when CURVE is on
  // Stamped on every request (Header.container): a ps channel's --container.
  std::string container;
};

}  // namespace pst

#endif  // PST_TRANSPORT_CHANNEL_OPTIONS_H_
