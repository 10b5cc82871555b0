// ShardAdmin: the chief's administration of the ps shards: it initializes
// them (and, under --ps_replicas, a returning task's replicas) and sends
// their chains, has them save and restore checkpoint parts, tells them the
// learning rate's lowerings, reads their status and shuts them down. No
// worker calls any of it; the data plane (pulls, pushes) is PsClient's.
//
// It speaks through a PsClient's connections (routed by its chains under
// --ps_replicas), so the chief keeps one set of connections to the ps.
//
// Ownership: borrows the client, which must outlive it.
// Thread safety: none; the thread that uses the client.
#ifndef PST_PS_SHARD_ADMIN_H_
#define PST_PS_SHARD_ADMIN_H_

#include <string>
#include <vector>

#include "ps/embedding_tables.h"
#include "ps/ps_client.h"

namespace pst {

class ShardAdmin {
 public:
  explicit ShardAdmin(PsClient* client) : client_(client) {}

  const Placement& placement() const { return client_->placement(); }
  int num_shards() const { return client_->num_shards(); }
  // The global step (PsClient::GlobalStep).
  StatusOr<int64_t> GlobalStep() { return client_->GlobalStep(); }

  // Initializes every shard: values[i] is the initial value of variable i.
  // Every shard also creates its part of the placement's tables.
  Status Initialize(const ShardConfig& config, const std::vector<Tensor>& values,
                    const ContainerInit& container = {}, const TableSettings& tables = {});
  // Replicated shards: initializes the replicas ps task `task` holds in
  // the chains (a task back after a loss, before it joins them).
  Status InitializeTask(int task, const ShardConfig& config, const std::vector<Tensor>& values,
                        const TableSettings& tables = {});
  // The chief's chains to the tasks each names (ChainRequest), in parallel.
  Status SendChains(const std::vector<ShardChain>& chains, MonotonicClock::TimePoint deadline);

  // Every shard writes its part of checkpoint `name` for `step` (in
  // parallel); returns each part's size and CRC32, indexed by shard.
  StatusOr<std::vector<FileDigest>> SaveCheckpoint(const std::string& name, int64_t step);
  // Every shard loads its part of checkpoint `name`.
  Status RestoreCheckpoint(const std::string& name, int64_t step);
  // --lr_schedule=plateau: tells every shard (in parallel) that the chief
  // lowered the learning rate `lowerings` times so far (k of
  // ps/optimizers/lr_schedule.h). The first error names its shard
  // ("ps:1: ..."); InvalidArgument for a negative k. A shard that failed
  // may run at another k than the others until it is sent again.
  Status SetLrLowerings(int lowerings, MonotonicClock::TimePoint deadline);

  // The incremental export: every shard's rows of each table written since
  // the previous cut, and a dynamic table's keys evicted (with
  // `with_values`; a base's cut only restarts the count), in parallel, one
  // CutRows per table with every shard's rows.
  // Unreplicated shards only (the router would need every replica's count).
  StatusOr<std::vector<CutRows>> CutChangedRows(bool with_values,
                                                MonotonicClock::TimePoint deadline);
  // Up to max_rows of shard `shard`'s rows of dynamic table `table`, from
  // `cursor` on (0 first; ListedRows::next for the next call), within the
  // client's RPC timeout. Unreplicated shards only.
  StatusOr<ListedRows> ListTableRows(int shard, const std::string& table, int64_t cursor,
                                     int64_t max_rows);

  // The status of ps task `shard`'s default container, or, with `replica`
  // >= 0, of its replica of that shard (--ps_replicas).
  StatusOr<ShardStatus> GetShardStatus(int shard, MonotonicClock::TimePoint deadline,
                                       int replica = -1);
  // Asks a shard to stop serving; waits for its answer until `deadline`.
  Status Shutdown(int shard, MonotonicClock::TimePoint deadline);

 private:
  // Every shard's init request.
  PsClient::Round InitRound(const ShardConfig& config, const std::vector<Tensor>& values,
                            const ContainerInit& container, const TableSettings& tables);

  PsClient* const client_;
};

}  // namespace pst

#endif  // PST_PS_SHARD_ADMIN_H_
