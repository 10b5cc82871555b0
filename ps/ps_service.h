// PsService: answers the requests a ps task receives (init, pull, push,
// status, save, restore, learning-rate lowerings, shutdown) from the VariableStore of the container
// each request names (ps/container.h): the default one, or a named one that
// several jobs' containers share the shard with.
//
// Cluster ids: the default container's is the server's (adopted at its first
// init, checked by the transport). A ps that serves named containers leaves
// the server's id unset and checks each request against its container's
// owner; it serves no default-container job meanwhile, and a ps serving a
// default-container job refuses other clusters' requests, so the two never
// mix.
//
// The requests that change or stop the shard as a whole (init, save,
// restore, learning-rate lowerings, shutdown) are the chief's: with
// PsServiceOptions::chief_addresses set, any other sender gets PermissionDenied and the shard is
// unchanged.
#ifndef PST_PS_PS_SERVICE_H_
#define PST_PS_PS_SERVICE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "monitoring/training_metrics.h"
#include "ps/container.h"
#include "ps/replica_shards.h"
#include "ps/shard_applied_notifier.h"
#include "ps/variable_store.h"
#include "transport/transport.h"

namespace pst {

struct PsServiceOptions {
  int shard = 0;
  // Where checkpoint parts go: <checkpoint_dir>/<checkpoint name>/ps-<shard>.part.
  // Empty: this ps refuses to save or restore.
  std::string checkpoint_dir;
  // The chief host's numeric IP addresses. When set, init, save, restore,
  // learning-rate lowerings and shutdown are served only to a sender of role Chief whose peer
  // address is one of them. Unset: served to any sender (a ps embedded in a benchmark or a fuzzer);
  // RunPsOn always sets it.
  std::optional<std::vector<std::string>> chief_addresses;
  // Links a named container to its chief at init; unset: named containers
  // send no step notices or heartbeats (a test, a benchmark).
  ContainerChiefFactory container_chief;
  // The ps tasks of the cluster: an embedding table's id i lives on shard
  // i % num_shards.
  int num_shards = 1;
  // Where this ps keeps the dynamic tables an init asks to be on disk
  // (--embedding_storage=disk:DIR); empty: it refuses such an init.
  std::string embedding_storage_dir;
  // Replicated shards (--ps_replicas > 1): how this ps's replicas ship
  // their state to their backups; unset: it holds no primary with backups.
  ReplicaShards::ShipperFactory shippers;
};

class PsService {
 public:
  // `server` is borrowed: the service adopts the chief's cluster id on it at
  // init, reads its byte counters and stops it on shutdown.
  // `notifier` (borrowed; may be null when no chief is configured) hears
  // about completed sync steps. `clock` (borrowed) times the chief's
  // requests (last_chief_contact).
  PsService(Server* server, ShardAppliedNotifier* notifier, PsServiceOptions options = {},
            const MonotonicClock& clock = SteadyClock())
      : server_(server), notifier_(notifier), options_(std::move(options)), clock_(clock) {}

  // `peer_address`: where the request came from
  // (RequestContext::peer_address()); empty when unknown, which a ps with
  // chief_addresses never takes for the chief.
  // `context`: the request's, to defer the reply of a push to a replicated
  // shard until its backups hold it; without one that push's handler waits.
  OutgoingMessage Handle(const ReceivedMessage& request, std::string_view peer_address = {},
                         RequestContext* context = nullptr);
  // True for the requests that are quick to serve and never block: pulls,
  // status, and async pushes and replication shipments of at most
  // kQuickPushBytes. A sync push may wait
  // on sending the chief a notice; a larger push goes to the handler
  // threads, which apply several workers' pushes in parallel. What a ps
  // serves on its I/O thread (ServerOptions::serve_inline).
  bool Quick(const ReceivedMessage& request) const;
  // About 0.1-0.5 ms of checking and applying on one core.
  static constexpr size_t kQuickPushBytes = size_t{1} << 20;
  // The default container's store.
  VariableStore& store() { return default_.store; }
  // Every container's load: the default one (when initialized) and the
  // named ones, by name.
  std::vector<ContainerLoad> Loads() const;
  // Every shard replica this ps holds (--ps_replicas).
  std::vector<ReplicaLoad> ReplicaLoads() const { return replicas_.Loads(); }
  // Stops replicating (drops every replica) before the server stops: a
  // replicator must not answer a push through a server that is gone.
  void StopReplicas() { replicas_.StopAll(); }
  // Drops every named container (their jobs' chiefs never released them),
  // for a ps that stops: their chief links must go before the transport.
  void ReleaseNamedContainers();
  // When the chief last sent this shard a request; none: never.
  std::optional<MonotonicClock::TimePoint> last_chief_contact() const;

 private:
  // True for a request of role Chief from one of chief_addresses (any
  // sender of role Chief without them).
  bool SentByChief(const ReceivedMessage& request, std::string_view peer_address) const;
  // The error for a request only the chief may send, from another sender.
  Status RefuseAdmin(const ReceivedMessage& request, std::string_view peer_address) const;
  // The container a request names, when it exists and belongs to the
  // sender's cluster; FailedPrecondition for a named one not initialized
  // (as for a ps restarted empty), PermissionDenied for another job's.
  StatusOr<std::shared_ptr<Container>> Find(const ReceivedMessage& request) const;
  // The replica a request's Header.replica names: a worker's pull or push
  // is served by the shard's primary at the request's epoch only.
  StatusOr<std::shared_ptr<Replica>> FindReplica(const ReceivedMessage& request) const;
  // The shard a request is about: Header.replica's, else this task's.
  int ShardOf(const ReceivedMessage& request) const;
  std::shared_ptr<Container> FindNamed(const std::string& name) const;
  // The named containers held, comma-separated ("" when none).
  std::string NamedContainers() const;
  OutgoingMessage HandleInit(const ReceivedMessage& request);
  OutgoingMessage InitNamed(const ReceivedMessage& request, const std::string& name,
                            const ShardConfig& config,
                            std::vector<std::pair<std::string, Tensor>> values,
                            const std::vector<EmbeddingTableConfig>& tables);
  OutgoingMessage HandlePull(const ReceivedMessage& request);
  // The values (and versions) of `names` in `c`, as a pull in `pull_dtype`
  // answers them, into reply->tensors.
  static Status AddPulledValues(Container& c, const std::vector<std::string>& names,
                                wire::DataType pull_dtype, OutgoingMessage* reply);
  OutgoingMessage HandlePush(const ReceivedMessage& request, RequestContext* context);
  // A push to a replicated shard is acknowledged once its backups hold it.
  OutgoingMessage ReplyWhenReplicated(const ReceivedMessage& request, RequestContext* context,
                                      const PushOutcome& outcome);
  OutgoingMessage HandleChain(const ReceivedMessage& request);
  OutgoingMessage HandleShip(const ReceivedMessage& request);
  // --follow: how far this shard applied each stream the request names.
  OutgoingMessage HandleStreams(const ReceivedMessage& request);
  // The incremental export: the rows written since the previous cut.
  OutgoingMessage HandleExportCut(const ReceivedMessage& request);
  // A dynamic table's rows, some at a time, for a base or model.bin.
  OutgoingMessage HandleTableRows(const ReceivedMessage& request);
  OutgoingMessage HandleStatus(const ReceivedMessage& request);
  OutgoingMessage HandleSave(const ReceivedMessage& request);
  OutgoingMessage HandleRestore(const ReceivedMessage& request);
  OutgoingMessage HandleLrLowerings(const ReceivedMessage& request);
  OutgoingMessage HandleShutdown(const ReceivedMessage& request);
  // This shard's part file of the checkpoint the request names (under a
  // folder of the container's name for a named one).
  StatusOr<std::string> PartPath(const ReceivedMessage& request) const;

  OutgoingMessage PushReply(const ReceivedMessage& request, const PushOutcome& outcome);

  Server* server_;
  ShardAppliedNotifier* notifier_;
  const PsServiceOptions options_;
  // Shared (aliased, never freed) like the named ones, so handlers treat all
  // containers alike.
  Container default_{""};
  mutable Mutex named_mu_;
  std::map<std::string, std::shared_ptr<Container>> named_ GUARDED_BY(named_mu_);
  ReplicaShards replicas_{options_.shard, options_.shippers};
  const MonotonicClock& clock_;
  // clock_ ticks since its epoch; kNever: never (a FakeClock's time 0 is a
  // time like any other).
  static constexpr MonotonicClock::Duration::rep kNever =
      std::numeric_limits<MonotonicClock::Duration::rep>::min();
  std::atomic<MonotonicClock::Duration::rep> last_chief_contact_{kNever};
};

}  // namespace pst

#endif  // PST_PS_PS_SERVICE_H_
