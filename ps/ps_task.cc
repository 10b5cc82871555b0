#include "ps/ps_task.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <thread>

#include "common/clock.h"
#include "common/signal_watcher.h"
#include "common/stop_signals.h"
#include "monitoring/metrics_http_server.h"
#include "monitoring/training_metrics.h"
#include "ps/container_chief_link.h"
#include "ps/ps_service.h"
#include "ps/stop_policy.h"
#include "ps/transport_shipper.h"
#include "transport/bind_address.h"
#include "transport/heartbeat_sender.h"
#include "transport/zmq_transport.h"

namespace pst {
namespace {

// How long a primary waits for a backup to take one shipment: short, so
// that pushes held by a backup that died go on soon after the chief takes
// it out of the chain (a shipment that timed out is simply shipped again).
constexpr std::chrono::milliseconds kShipPatience{1000};

// Every numeric address of `host` ("h0" -> {"10.0.0.5"}; "127.0.0.1" ->
// itself), written as libzmq writes a peer's address.
StatusOr<std::vector<std::string>> NumericAddresses(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(host.c_str(), nullptr, &hints, &found); error != 0) {
    return Unavailable("cannot resolve the chief host '" + host + "': " + gai_strerror(error));
  }
  std::vector<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char numeric[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, numeric, sizeof numeric, nullptr, 0,
                    NI_NUMERICHOST) == 0 &&
        std::find(addresses.begin(), addresses.end(), numeric) == addresses.end()) {
      addresses.push_back(numeric);
    }
  }
  freeaddrinfo(found);
  if (addresses.empty()) {
    return Unavailable("the chief host '" + host + "' has no address");
  }
  return addresses;
}

// NumericAddresses, retried for `patience`: Kubernetes publishes a pod's DNS
// name only once the pod runs, so a ps that starts before its chief waits
// for the name instead of exiting (and crash-looping).
StatusOr<std::vector<std::string>> WaitForChiefAddresses(const std::string& host,
                                                         std::chrono::milliseconds patience,
                                                         const std::atomic<bool>& signalled) {
  constexpr std::chrono::seconds kLogEvery{10};
  const auto start = SteadyClock().Now();
  auto next_log = start;
  for (;;) {
    StatusOr<std::vector<std::string>> addresses = NumericAddresses(host);
    if (addresses.ok()) return addresses;
    const auto waited =
        std::chrono::duration_cast<std::chrono::seconds>(SteadyClock().Now() - start);
    if (SteadyClock().Now() - start >= patience) {
      return Unavailable(addresses.status().message() + " (waited " +
                         std::to_string(waited.count()) + " s for the name to resolve)");
    }
    if (signalled.load()) {
      return Aborted("interrupted by a signal while waiting for the chief host '" + host +
                     "' to resolve");
    }
    if (SteadyClock().Now() >= next_log) {
      LOG(WARNING) << addresses.status().message() << "; waiting for the name to resolve ("
                   << waited.count() << " of "
                   << std::chrono::duration_cast<std::chrono::seconds>(patience).count() << " s)";
      next_log += kLogEvery;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// The shard's load as its status request reports it (PsService::HandleStatus).
ShardLoad Load(int shard, PsService& service, const Server& server) {
  const StoreStats s = service.store().Stats();
  ShardLoad load;
  load.shard = shard;
  load.initialized = s.initialized;
  load.variables = s.variables;
  load.bytes_held = s.bytes;
  load.bytes_in = server.bytes_in();
  load.bytes_out = server.bytes_out();
  load.updates_applied = s.updates_applied;
  load.gradients_dropped = s.gradients_dropped;
  load.queue_depth = server.queue_depth();
  load.containers = service.Loads();
  for (const ReplicaLoad& r : service.ReplicaLoads()) {
    load.replicas.push_back({r.shard, r.epoch, r.primary, r.rounds, r.bytes_shipped,
                             r.shipments_taken, r.filled_at_epoch});
  }
  for (const TableLoad& t : service.store().TableStats()) {
    const EmbeddingTableStats& ts = t.stats;
    load.tables.push_back({t.name, ts.rows_held, ts.rows_created, ts.rows_evicted, ts.keys_refused,
                           ts.rows_dropped, ts.bytes});
  }
  return load;
}

// Serves until the chief shuts the shard down, or `stop` asks: at once, or
// gracefully when `policy` says so.
void ServeUntilStopped(Server& server, PsService& service, const PsStopRequests& stop,
                       const StopPolicy& policy, const MonotonicClock& clock) {
  std::optional<MonotonicClock::TimePoint> signalled_at;
  while (!server.WaitFor(stop.check_every)) {
    if (stop.now.load()) {
      LOG(INFO) << "stopping at once";
      service.StopReplicas();
      server.Stop();
      continue;
    }
    if (!stop.graceful.load()) continue;
    const auto now = clock.Now();
    const bool first = !signalled_at;
    if (first) signalled_at = now;
    const StopPolicy::Decision d = policy.Decide(now, *signalled_at, service.last_chief_contact());
    if (d.stop) {
      LOG(INFO) << "stopping: " << d.reason;
      service.StopReplicas();
      server.Stop();
    } else if (first) {
      LOG(INFO) << d.reason;
    }
  }
}

}  // namespace

Status RunPsOn(const PsOptions& options, Transport& transport, const PsSite& site,
               const MonotonicClock& clock, const PsStopRequests& stop) {
  ServerOptions server_options;
  server_options.name = "ps:" + std::to_string(options.task_index);
  server_options.endpoint = site.endpoint;
  server_options.role = wire::Role::Ps;
  server_options.index = options.task_index;
  server_options.max_message_bytes = options.max_message_bytes;
  server_options.num_threads = options.num_threads;
  server_options.cluster_id = options.cluster_id;
  server_options.curve = options.curve;
  // Declared before the server, which uses it until it is destroyed.
  std::unique_ptr<PsService> service;
  server_options.serve_inline = [&service](const ReceivedMessage& r) { return service->Quick(r); };

  ChannelOptions chief;
  chief.peer_name = "chief";
  chief.endpoint = options.cluster.chief.Endpoint();
  chief.role = wire::Role::Ps;
  chief.index = options.task_index;
  chief.curve = options.curve;
  ShardAppliedNotifier notifier(transport, chief);
  std::unique_ptr<Server> server =
      transport.Listen(server_options, [&service](const ReceivedMessage& r, RequestContext& c) {
        return service->Handle(r, c.peer_address(), &c);
      });
  // A named container's chief: on the chief host, at the port its init names.
  auto container_chief = [&transport, chief, &options](int port, uint64_t cluster_id) {
    ChannelOptions its_chief = chief;
    its_chief.endpoint = HostPort{options.cluster.chief.host, port}.Endpoint();
    return std::make_unique<ContainerChiefLink>(transport, its_chief, options.heartbeat_interval,
                                                cluster_id);
  };
  PsServiceOptions service_options{options.task_index, options.checkpoint_dir, site.chief_addresses,
                                   container_chief, static_cast<int>(options.cluster.ps.size())};
  service_options.embedding_storage_dir = options.embedding_storage_dir;
  service_options.shippers = [&transport, &options](uint64_t cluster_id) {
    std::vector<ChannelOptions> ps;
    for (size_t k = 0; k < options.cluster.ps.size(); ++k) {
      ChannelOptions to;
      to.peer_name = "ps:" + std::to_string(k);
      to.endpoint = options.cluster.ps[k].Endpoint();
      to.role = wire::Role::Ps;
      to.index = options.task_index;
      to.rpc_timeout_ms = kShipPatience.count();
      to.max_message_bytes = options.max_message_bytes;
      to.curve = options.curve;
      to.cluster_id = cluster_id;
      ps.push_back(to);
    }
    return std::make_unique<TransportShipper>(&transport, std::move(ps));
  };
  service = std::make_unique<PsService>(server.get(), &notifier, service_options, clock);
  PST_RETURN_IF_ERROR(server->Start());
  std::unique_ptr<MetricsHttpServer> metrics;
  if (options.metrics_port > 0) {
    MetricsHttpServerOptions metrics_options;
    metrics_options.host = site.metrics_host;
    metrics_options.port = options.metrics_port;
    metrics = std::make_unique<MetricsHttpServer>(
        metrics_options, [&service, &server, shard = options.task_index] {
          return ShardMetricsText(Load(shard, *service, *server));
        });
    PST_RETURN_IF_ERROR(metrics->Start());
    LOG(INFO) << server_options.name << " metrics on http://" << site.metrics_host << ":"
              << metrics->port() << "/metrics";
  }
  HeartbeatSender heartbeat(transport, chief, options.heartbeat_interval,
                            [&server] { return server->cluster_id(); });
  LOG(INFO) << server_options.name << " serving on " << server->bound_endpoint();
  ServeUntilStopped(*server, *service, stop, StopPolicy(options.stop), clock);
  // Says which named containers their jobs never released, and ends their
  // heartbeats now.
  service->ReleaseNamedContainers();
  service->StopReplicas();  // stopped by the chief or a signal: already done
  LOG(INFO) << server_options.name << " stopped";
  return Status::OK();
}

Status RunPs(const PsOptions& options) {
  // First, before any thread exists, so every thread inherits the blocked signals.
  // The first signal asks for a stop that StopPolicy times (ServeUntilStopped);
  // a later one stops at once.
  PsStopRequests stop;
  StopSignals stop_signals;
  SignalWatcher signals([&stop, &stop_signals](int signal) {
    switch (stop_signals.OnSignal(SteadyClock().Now())) {
      case StopSignals::Meaning::kGracefulStop:
        LOG(INFO) << "signal " << signal << ": stopping";
        stop.graceful.store(true);
        return;
      case StopSignals::Meaning::kSameRequest: return;
      case StopSignals::Meaning::kStopNow:
        LOG(INFO) << "signal " << signal << " again: stopping at once";
        stop.now.store(true);
        return;
    }
  });
  const HostPort& me = options.cluster.ps[options.task_index];
  PsSite site;
  // Only the chief may initialize, checkpoint, restore or stop this shard;
  // the cluster spec says where it runs.
  PST_ASSIGN_OR_RETURN(site.chief_addresses,
                       WaitForChiefAddresses(options.cluster.chief.host,
                                             options.chief_resolve_patience, stop.graceful));
  const BindAddress bind = ChooseBindAddress(me.host, options.bind_host);
  site.endpoint = bind.Endpoint(me.port);
  site.metrics_host = bind.address;
  LOG(INFO) << "ps:" << options.task_index << " (" << me.ToString() << ") binds " << bind.address
            << " (" << bind.reason << ")";
  zmq::context_t context(1);
  ZmqTransport transport(context);
  return RunPsOn(options, transport, site, SteadyClock(), stop);
}

}  // namespace pst
