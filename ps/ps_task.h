// The ps task: serves the variables of one shard until the chief shuts it
// down, or after SIGINT/SIGTERM when StopPolicy says so (a second signal
// stops it at once).
#ifndef PST_PS_PS_TASK_H_
#define PST_PS_PS_TASK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "common/clock.h"
#include "common/status.h"
#include "ps/stop_policy.h"
#include "transport/curve.h"
#include "transport/transport.h"

namespace pst {

struct PsOptions {
  ClusterSpec cluster;
  int task_index = 0;
  int num_threads = 2;  // request handler threads
  size_t max_message_bytes = size_t{1} << 30;
  uint64_t cluster_id = 0;            // 0: adopt the chief's at init
  std::string checkpoint_dir;         // where this ps writes its checkpoint parts
  std::string embedding_storage_dir;  // tables on disk (--embedding_storage=disk:DIR); "": none
  std::chrono::milliseconds heartbeat_interval{2500};  // to the chief
  std::optional<CurveKeys> curve;                      // CURVE on every socket when set
  // Port of the Prometheus endpoint (GET /metrics) on this task's host;
  // 0: none.
  int metrics_port = 0;
  // The address to bind ("": decide from this task's host name, see
  // transport/bind_address.h).
  std::string bind_host;
  // When a signalled ps stops: it keeps serving while the chief checkpoints.
  StopPolicyOptions stop;
  // How long to wait for the chief's host name to resolve at start.
  std::chrono::milliseconds chief_resolve_patience{std::chrono::minutes(5)};
};

// Where a ps serves on its network, as RunPs finds out from the host (the
// address to bind, the chief's name resolved); a test names in-process
// endpoints.
struct PsSite {
  std::string endpoint;  // to listen on: "tcp://10.0.0.5:2222"
  // The chief host's numeric addresses: only requests from there may
  // initialize, checkpoint, restore or stop the shard.
  std::vector<std::string> chief_addresses;
  std::string metrics_host;  // where GET /metrics listens (PsOptions::metrics_port)
};

// What a ps is asked from outside its transport: RunPs sets these on
// SIGINT/SIGTERM (common/stop_signals.h).
struct PsStopRequests {
  std::atomic<bool> graceful{false};  // stop when StopPolicy says so
  std::atomic<bool> now{false};       // stop at once
  // How often the flags are looked at while serving (a signal handler only
  // sets them); tests look more often.
  std::chrono::milliseconds check_every{100};
};

// Binds the port of this task in the cluster spec (on the address its host
// name resolves to, see transport/bind_address.h) and serves until shut down.
// Returns an error when it cannot bind, or when the chief's host name does
// not resolve within chief_resolve_patience.
Status RunPs(const PsOptions& options);

// The ps's life over `transport` (an in-process one in tests): serves at
// site.endpoint, heartbeats the chief, and stops when the chief shuts it
// down, on stop.now, or after stop.graceful once StopPolicy on `clock` says
// so (checked every 100 ms). RunPs resolves the site, makes a ZeroMQ
// transport and sets `stop` on signals.
Status RunPsOn(const PsOptions& options, Transport& transport, const PsSite& site,
               const MonotonicClock& clock, const PsStopRequests& stop);

}  // namespace pst

#endif  // PST_PS_PS_TASK_H_
