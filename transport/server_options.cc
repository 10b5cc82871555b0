#include "transport/server_options.h"

#include <algorithm>

namespace pst {

Status CheckClusterId(const ServerOptions& options, uint64_t cluster_id,
                      const ReceivedMessage& request) {
  const uint64_t theirs = request.header().cluster_id();
  if (cluster_id == 0 || theirs == cluster_id) return Status::OK();
  const auto& open = options.open_types;
  if (theirs == 0 && std::find(open.begin(), open.end(), request.type()) != open.end()) {
    return Status::OK();
  }
  // Names only the sender's own id: the server's would let anyone who can
  // reach it speak for its cluster.
  return PermissionDenied(options.name + " refuses a message from cluster " +
                          std::to_string(theirs) + ": not this cluster");
}

}  // namespace pst
