// PsClient: the data plane to every ps shard of a cluster, for a worker, the
// chief's evaluation, a test or a benchmark: pulls and pushes. Splits
// variables into their slices, sends one request per shard with all shards'
// requests in flight together, and reassembles partitioned variables. The
// chief's administration of the shards (init, chains, checkpoints, status,
// shutdown) is ShardAdmin's, over a PsClient's connections.
//
// Thread safety: none; one PsClient per thread (it owns its connections,
// e.g. DEALER sockets).
#ifndef PST_PS_PS_CLIENT_H_
#define PST_PS_PS_CLIENT_H_

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "common/clock.h"
#include "common/tensor_file.h"
#include "monitoring/training_metrics.h"
#include "ps/embedding_tables.h"
#include "ps/replica_router.h"
#include "ps/replica_shards.h"
#include "ps/shard_config.h"
#include "transport/transport.h"

namespace pst {

struct ClientIdentity {
  wire::Role role = wire::Role::Client;
  int32_t index = 0;
  uint64_t cluster_id = 0;
  int rpc_timeout_ms = 30000;
  size_t max_message_bytes = size_t{1} << 30;
  std::optional<CurveKeys> curve;  // the cluster's keys when CURVE is on
  // Borrowed; once set (a signal), every wait but a sync push's ends with
  // Aborted (SyncPush).
  const std::atomic<bool>* interrupt = nullptr;
  // How float32 values and gradients travel (--wire_dtype): kFloat32, or
  // kBFloat16 (half the bytes; the client narrows pushes and widens pulls,
  // so callers always see float32). Int64 variables always travel as int64.
  DType wire_dtype = DType::kFloat32;
  // --container: every request names it ("": the default container).
  std::string container;
};

// What a named container's init tells each shard besides the variables.
struct ContainerInit {
  int chief_port = 0;  // where the container's step notices and heartbeats go
  bool reset = false;  // discard what the container holds, another job's too
};

// How the ps create the rows of the placement's embedding tables.
struct TableSettings {
  int64_t capacity = 0;   // dynamic tables: most rows per ps
  int64_t min_count = 1;  // dynamic tables: sightings before a key gets a row
  uint64_t seed = 0;      // rows start from a seeded function of (table, id)
  float init_scale = 0.05f;
  float l2 = 0;  // L2 on the rows a gradient touches (--embedding_l2)
  // Dynamic tables in RocksDB on each ps (--embedding_storage=disk:DIR, the
  // folder being each ps's own), cache_rows rows of each in RAM.
  bool on_disk = false;
  int64_t cache_rows = 0;
};

struct PushSummary {
  uint32_t applied = 0;
  uint32_t dropped = 0;
  uint32_t scaled = 0;
  int64_t max_staleness = 0;
  int64_t global_step = -1;  // -1 unless the push went to the global step's shard
  // Sync mode: shards that dropped the push as stale / as a duplicate.
  uint32_t stale_shards = 0;
  uint32_t duplicate_shards = 0;
  // Adds a later push's (or part's) results.
  void Add(const PushSummary& later);
};

// The rows of one embedding table (placement().tables()[table]) that a
// step reads and updates: Pull fills rows and versions for ids, and a push
// sends a gradient row for each id, tagged with the pulled version.
struct TableRows {
  int table = 0;
  std::vector<int64_t> ids;       // unique ids (a fixed table's in [0, rows))
  Tensor rows;                    // [ids, dim] float32, in ids' order
  std::vector<int64_t> versions;  // each row's version when pulled
};

struct ShardStatus {
  StoreStats store;               // of the container asked about
  std::vector<TableLoad> tables;  // its embedding tables' parts on this shard
  // Every container the shard holds (ps/container.h).
  std::vector<ContainerLoad> containers;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint32_t queue_depth = 0;
  std::vector<ReplicaLoad> replicas;  // --ps_replicas: every replica the ps holds
};

class PsClient {
 public:
  // `transport` is borrowed and must outlive the client.
  PsClient(Transport& transport, const ClusterSpec& cluster, Placement placement,
           ClientIdentity identity);
  // Not copied or moved: its calls refer to its own connections.
  PsClient(const PsClient&) = delete;
  PsClient& operator=(const PsClient&) = delete;

  const Placement& placement() const { return placement_; }
  void set_cluster_id(uint64_t id);
  // Replicated shards (--ps_replicas): from now on every shard's requests
  // go to its primary as `routes` (borrowed) says, pushes carry ids, and
  // Initialize, SetLrLowerings reach every replica (ReplicaRouter).
  void RouteByChains(RouteSource* routes,
                     WhenRefused when_refused = WhenRefused::kWaitForNewRoutes);

  // Pulls the given variables (indexes into placement().variables()) into
  // (*values)[i] for variables[i]. Remembers each slice's version for the
  // next Push. A variable held whole by one shard comes back as a read-only
  // view of the received bytes (no copy): replace it, never write into it.
  // (With a bfloat16 wire, values are widened into float32 buffers instead.)
  Status Pull(const std::vector<int>& variables, std::vector<Tensor>* values);
  // The same, and the rows of each table's ids (one request per shard for
  // all of it: each shard is asked only for the ids it holds).
  Status Pull(const std::vector<int>& variables, std::vector<Tensor>* values,
              std::vector<TableRows>* tables);

  // Pushes grads[i] for variables[i], each slice tagged with the version of
  // the last Pull. With increment_global_step, the shard holding the global
  // step increments it once this push is applied there.
  StatusOr<PushSummary> Push(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                             bool increment_global_step);
  // The same with row gradients: row_grads[i] ([ids, dim] float32) for
  // tables[i], as a Pull left it (ids and versions), each shard sent its
  // ids' rows.
  // With a `stream` mark (--follow) every shard gets the push, rows or
  // not, so that every shard's StreamLedger records the batch.
  StatusOr<PushSummary> Push(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                             bool increment_global_step, const std::vector<TableRows>& tables,
                             const std::vector<Tensor>& row_grads, const StreamBatch& stream = {});

  // --follow: how far each shard has applied `stream` (one per shard, in
  // shard order).
  StatusOr<std::vector<StreamProgress>> StreamProgressOf(uint64_t stream);

  // Async mode: Push, then Pull(pull_variables, values) sent right after it,
  // without waiting for the push's reply; both replies are then collected
  // together, which saves the push's round trip. A shard that serves a
  // connection's requests in order (a ps serves pulls and async pushes up
  // to PsService::kQuickPushBytes on its I/O thread, in arrival order)
  // answers the pull with this push applied; one that does not (a larger
  // push goes to a handler thread) may answer before applying it: the
  // values then miss this push, and the next push carries their older
  // versions, so the ps counts that staleness (DESIGN section 6). On an
  // error of either, *values are unspecified: pull again.
  StatusOr<PushSummary> PushThenPull(const std::vector<int>& variables,
                                     const std::vector<Tensor>& grads, bool increment_global_step,
                                     const std::vector<int>& pull_variables,
                                     std::vector<Tensor>* values);

  // Async mode, --overlap: PushThenPull's requests, but it returns as soon
  // as the pull's replies are in, leaving the push in flight: its replies
  // (under --ps_replicas, sent once every backup holds it) are collected by
  // FinishPush or MakeRoomForPush, so the caller computes its next step
  // meanwhile. Up to max_pushes_in_flight() pushes may be in flight; every
  // call but the next push's fails with FailedPrecondition until
  // FinishPush. On an error every push in flight is abandoned (as a failed
  // PushThenPull's is) and *values are unspecified.
  Status StartPushThenPull(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                           bool increment_global_step, const std::vector<int>& pull_variables,
                           std::vector<Tensor>* values);
  // The same in pieces, for gradients sent as backprop makes them: each
  // SendPushPart sends one part of a push (some of the variables) and
  // leaves it in flight; PullBehindPush then sends the pull behind the
  // parts and returns once its replies are in. Together the parts are one
  // push: FinishPush collects them all, and no further part may be sent
  // after the pull. Exactly one part should increment the global step. On
  // an error every part is abandoned. With `not_finite`, the part is
  // checked as it is built (on a bfloat16 wire, in the narrowing pass; a
  // value that narrows to infinity counts): a NaN or infinity sends
  // nothing and sets *not_finite to the index in `variables` of the first
  // gradient holding one.
  Status SendPushPart(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                      bool increment_global_step, std::optional<size_t>* not_finite = nullptr);
  Status PullBehindPush(const std::vector<int>& variables, std::vector<Tensor>* values);
  // PullBehindPush in pieces, for each variable pulled as soon as its part
  // is sent: SendPullBehindPush sends a pull of `variables` behind the
  // parts sent so far, without waiting; its values include them as
  // PushThenPull's do. TakePullsBehindPush waits for every such pull and
  // puts variables[i]'s value, pulled by one of them, in (*values)[i]; the
  // push then takes no more parts. On an error the push is abandoned.
  Status SendPullBehindPush(const std::vector<int>& variables);
  // SendPushPart, then SendPullBehindPush of the same variables. Unless
  // routed by chains (--ps_replicas), the pull rides in the push: each
  // shard answers the part with its values after applying it, so the two
  // are one exchange. (A replicated push's reply waits for the backups,
  // which the pull must not.)
  Status SendPushPartAndPull(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                             bool increment_global_step,
                             std::optional<size_t>* not_finite = nullptr);
  Status TakePullsBehindPush(const std::vector<int>& variables, std::vector<Tensor>* values);
  // Waits for every push left in flight (all their parts), the oldest
  // first; nullopt when none is.
  StatusOr<std::optional<PushSummary>> FinishPush();
  // How many pushes may be in flight at once: under --ps_replicas two
  // (PushLedger::kPushesInFlight), so a push's acknowledgement, which waits
  // for the backups, has a whole further step to come; otherwise one (its
  // acknowledgement comes with the pull behind it).
  size_t max_pushes_in_flight() const;
  // Waits for the oldest pushes in flight until another may start (see
  // FinishPush); nullopt when there was room already.
  StatusOr<std::optional<PushSummary>> MakeRoomForPush();

  // Sync mode: pushes grads[i] for variables[i] for the step of the
  // worker's token, which aggregates `replicas` gradients (0: the shards'
  // configured N). A signal (ClientIdentity::interrupt) does not cut its
  // wait short: every shard, or none, holds the push of a worker that
  // leaves on one.
  StatusOr<PushSummary> SyncPush(const std::vector<int>& variables,
                                 const std::vector<Tensor>& grads, int64_t step, int replicas = 0);
  // With row gradients (see Push); every shard gets a push then, with no
  // rows where a table has none of its ids: each shard counts the step's
  // gradients.
  StatusOr<PushSummary> SyncPush(const std::vector<int>& variables,
                                 const std::vector<Tensor>& grads, int64_t step, int replicas,
                                 const std::vector<TableRows>& tables,
                                 const std::vector<Tensor>& row_grads);

  // The global step: a pull of the int64 scalar variable 0.
  StatusOr<int64_t> GlobalStep();

  int num_shards() const { return static_cast<int>(channels_.size()); }

 private:
  // The chief's administration of the shards speaks through this client's
  // connections and rounds (ps/shard_admin.h).
  friend class ShardAdmin;

  // Whether values of this dtype travel narrowed to bfloat16.
  bool Narrowed(DType variable_dtype) const;
  // A pulled value is reassembled (partitioned) or widened (bfloat16) in
  // place: it needs a buffer of its own, not the reply's.
  bool NeedsPrivateBuffer(int variable) const;

  // One request per shard: requests[k] goes to shard k when send[k];
  // replies[k] answers it.
  struct Round {
    explicit Round(int shards) : requests(shards), send(shards, false), replies(shards) {}
    // Empties every request and reply, keeping the vectors' memory.
    void Clear();
    std::vector<OutgoingMessage> requests;
    std::vector<bool> send;
    StreamBatch stream;  // a push round's --follow mark; none by default
    std::vector<ReceivedMessage> replies;
  };
  // A round the client keeps from call to call, so that a pull or push
  // allocates nothing for its bookkeeping; emptied when the call is done
  // with it, so that no request holds the caller's gradients in between
  // (the zero-copy ones are theirs) and no reply holds received frames.
  class ReusedRound {
   public:
    explicit ReusedRound(Round* round) : round_(*round) {}
    ~ReusedRound() { round_.Clear(); }
    ReusedRound(const ReusedRound&) = delete;
    ReusedRound& operator=(const ReusedRound&) = delete;
    Round& operator*() { return round_; }
    Round* get() { return &round_; }

   private:
    Round& round_;
  };
  // For each shard, the (value index, slice) pairs a pull asked for, in
  // request order.
  using Wanted = std::vector<std::vector<std::pair<int, int>>>;

  // Fills empty *round with the pull of `variables` into *values (private
  // buffers made ready where slices are reassembled or widened), and
  // *wanted with what it asks each shard for.
  void PullRound(const std::vector<int>& variables, std::vector<Tensor>* values, Wanted* wanted,
                 Round* round);
  // Takes a pull's replies into *values; each shard's reply holds
  // row_tensors[k] tensors of table rows after the variables (none when
  // row_tensors is empty).
  Status TakePulled(Round& round, const Wanted& wanted, std::vector<Tensor>* values,
                    const std::vector<size_t>& row_tensors = {});
  // For each table, the positions in its ids that each shard holds.
  using ShardPositions = std::vector<std::vector<std::vector<int64_t>>>;
  ShardPositions SplitByShard(const std::vector<TableRows>& tables) const;
  // Adds the tables' row ids to a pull round; returns each shard's count
  // of row tensors its reply will hold.
  std::vector<size_t> AddRowPulls(const std::vector<TableRows>& tables,
                                  const ShardPositions& positions, Round* round);
  // Takes the rows of a pull's replies (after `variables_per_shard`
  // tensors) into the tables.
  Status TakePulledRows(const Round& round, const Wanted& wanted, const ShardPositions& positions,
                        std::vector<TableRows>* tables);
  // Adds row gradients to a push round (every shard when `all_shards`).
  Status AddRowPushes(const std::vector<TableRows>& tables, const std::vector<Tensor>& row_grads,
                      bool all_shards, Round* round);
  // InvalidArgument unless grads[i] has variables[i]'s dtype and shape.
  Status CheckGradients(const std::vector<int>& variables, const std::vector<Tensor>& grads) const;
  // The push requests built from now on belong to a new push (their ids:
  // ReplicaRouter::NextPushId).
  void StartPush();
  // Fills empty *round with a push of checked gradients (`replicas`: see
  // SyncPush). With `not_finite` (see SendPushPart), a non-finite gradient
  // stops it early: *not_finite set, the round is not to be sent. With
  // `pull_back`, each shard's reply also carries its slices' values after
  // the push.
  void PushRound(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                 bool increment_global_step, int64_t step, int replicas, Round* round,
                 std::optional<size_t>* not_finite = nullptr, bool pull_back = false);
  // SendPushPart's work; see PushRound for `pull_back`.
  Status SendPart(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                  bool increment_global_step, std::optional<size_t>* not_finite, bool pull_back);
  StatusOr<PushSummary> TakePushed(const Round& round);
  // Adds round's push results to *summary.
  Status AddPushed(const Round& round, PushSummary* summary);

  // Requests sent to the shards, not all answered yet, in the order of the
  // rounds that sent them, over `channels` (one per shard).
  struct ShardCalls {
    explicit ShardCalls(const std::vector<Connection*>& to) : channels(to) {}
    // Forgets every call, keeping the memory for the next ones.
    void Clear() {
      rounds.clear();
      direct.Clear();
      routed = ReplicaRouter::Calls();
    }
    const std::vector<Connection*>& channels;  // the client's Lane()
    std::vector<Round*> rounds;
    PendingCalls direct;          // unreplicated shards
    ReplicaRouter::Calls routed;  // --ps_replicas
    std::vector<bool> needed;     // WaitShards's
  };
  // A push left in flight (SendPushPart, StartPushThenPull), and the pull
  // sent behind it.
  // A pull sent behind a push in flight, and where its values go.
  struct PendingPull {
    explicit PendingPull(int shards) : round(shards) {}
    Round round;               // sent, unless the values ride in `carrier`
    Round* carrier = nullptr;  // the push part whose replies carry the values
    Wanted wanted;
    std::vector<int> variables;
    std::vector<Tensor> values;
  };
  struct InFlightPush {
    explicit InFlightPush(int lane_index, const std::vector<Connection*>& channels)
        : lane(lane_index), calls(channels) {}
    // Which set of connections it uses: two pushes in flight use two, so
    // that waiting for one's replies never drops the other's.
    int lane = 0;
    std::deque<Round> parts;  // deques: calls point into their rounds
    std::deque<PendingPull> pulls;
    bool pulled = false;  // the pulls were taken: the push takes no more parts
    ShardCalls calls;
    // Parts whose replies were taken with the values they carried, and
    // their results.
    std::vector<const Round*> taken_parts;
    PushSummary taken;
  };
  // The connections of lane `lane` (0: channels_; 1: made at first use).
  const std::vector<Connection*>& Lane(int lane);
  // The push in flight that takes parts and pulls now (not yet pulled);
  // null when none.
  InFlightPush* Open();
  // Abandons every push in flight (after an error of one).
  void Abandon() { flights_.clear(); }
  // Waits for the oldest push in flight; adds its results to *summary.
  Status FinishOldest(PushSummary* summary);
  // Waits for the oldest pushes in flight until at most `keep` are, none of
  // them still taking parts; nullopt when there was nothing to wait for.
  StatusOr<std::optional<PushSummary>> FinishPushesBeyond(size_t keep);
  // channel.Send(request), refused while a push is in flight.
  StatusOr<uint64_t> SendTo(Connection& channel, const OutgoingMessage& request);
  // Sends every round's requests, one round after the other, adding them
  // to *calls; refused while a push is in flight.
  Status SendShards(const std::vector<Round*>& rounds, ShardCalls* calls);
  // SendShards for the push in flight.
  Status SendRounds(const std::vector<Round*>& rounds, ShardCalls* calls);
  // Waits for the replies of the requests of `rounds` (of calls->rounds),
  // into their Round::replies; the others stay in flight. Unless
  // `interruptible` is false, ClientIdentity::interrupt cuts the wait short.
  Status WaitShards(ShardCalls* calls, const std::vector<Round*>& rounds,
                    bool interruptible = true);
  // SendShards, then WaitShards for all.
  Status CallShards(const std::vector<Round*>& rounds);
  // Replicated: shard k's request of `round` to every replica of shard k.
  Status CallEveryReplica(const Round& round, MonotonicClock::TimePoint deadline);

  Placement placement_;
  Transport& transport_;
  std::vector<std::unique_ptr<Connection>> channels_;
  std::vector<ChannelOptions> channel_options_;           // channels_'s, by shard
  std::vector<std::unique_ptr<Connection>> second_lane_;  // see InFlightPush::lane
  std::vector<Connection*> lane_connections_[2];          // Lane()'s
  // CallShards's, reused so that a call allocates nothing for them.
  ShardCalls lane0_calls_{lane_connections_[0]};
  // Pull's, Push's, SyncPush's and PushThenPull's (see ReusedRound).
  Round pull_round_{placement_.num_shards()};
  Round push_round_{placement_.num_shards()};
  Wanted pull_wanted_;
  std::unique_ptr<ReplicaRouter> router_;  // replicated shards only
  // By variable: private buffers of values the caller of
  // TakePullsBehindPush gave back, for the next pull of them.
  std::vector<Tensor> spare_values_;
  std::deque<std::unique_ptr<InFlightPush>> flights_;  // oldest first; see StartPushThenPull
  int32_t index_ = 0;                                  // ClientIdentity::index
  const std::atomic<bool>* interrupt_ = nullptr;       // see ClientIdentity
  const DType wire_dtype_;                             // see ClientIdentity
  std::vector<int64_t> slice_versions_;
  int global_step_slice_ = -1;
};

// For a caller of StartPushThenPull whose model writes gradients in place:
// makes *grads writable. A push in flight still holds the last step's (an
// in-process ps may read them from there), so a set of *spares (earlier
// steps') that no push holds any more is swapped in; when every one is
// still held too, *grads is emptied for the model to allocate afresh. With
// PsClient::max_pushes_in_flight() spares the buffers go round without
// allocating.
void TakeWritableGradients(std::vector<Tensor>* grads, std::vector<std::vector<Tensor>>* spares);

}  // namespace pst

#endif  // PST_PS_PS_CLIENT_H_
