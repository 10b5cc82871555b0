#include "ps/ps_client.h"

#include <algorithm>
#include <map>

#include "common/bfloat16.h"
#include "common/clock.h"
#include "common/non_finite.h"
#include "ps/chain_wire.h"

namespace pst {
namespace {

// Index of the slice's first element within its variable's value.
int64_t FirstElement(const Slice& slice, const Shape& full) {
  if (full.empty() || full[0] == 0) return 0;
  return slice.row_begin * (NumElements(full) / full[0]);
}

}  // namespace

void PushSummary::Add(const PushSummary& later) {
  applied += later.applied;
  dropped += later.dropped;
  scaled += later.scaled;
  max_staleness = std::max(max_staleness, later.max_staleness);
  if (later.global_step >= 0) global_step = later.global_step;
  stale_shards += later.stale_shards;
  duplicate_shards += later.duplicate_shards;
}

bool PsClient::NeedsPrivateBuffer(int variable) const {
  return placement_.SlicesOfVariable(variable).size() > 1 ||
         Narrowed(placement_.variables()[variable].dtype);
}

bool PsClient::Narrowed(DType variable_dtype) const {
  return wire_dtype_ == DType::kBFloat16 && variable_dtype == DType::kFloat32;
}

PsClient::PsClient(Transport& transport, const ClusterSpec& cluster, Placement placement,
                   ClientIdentity identity)
    : placement_(std::move(placement)), transport_(transport), wire_dtype_(identity.wire_dtype) {
  CHECK(wire_dtype_ == DType::kFloat32 || wire_dtype_ == DType::kBFloat16);
  CHECK_EQ(static_cast<size_t>(placement_.num_shards()), cluster.ps.size());
  for (size_t k = 0; k < cluster.ps.size(); ++k) {
    ChannelOptions options;
    options.peer_name = "ps:" + std::to_string(k);
    options.endpoint = cluster.ps[k].Endpoint();
    options.cluster_id = identity.cluster_id;
    options.role = identity.role;
    options.index = identity.index;
    options.rpc_timeout_ms = identity.rpc_timeout_ms;
    options.max_message_bytes = identity.max_message_bytes;
    options.curve = identity.curve;
    options.container = identity.container;
    channels_.push_back(transport.Connect(options));
    channel_options_.push_back(options);
    lane_connections_[0].push_back(channels_.back().get());
  }
  interrupt_ = identity.interrupt;
  index_ = identity.index;
  slice_versions_.assign(placement_.slices().size(), 0);
  spare_values_.resize(placement_.variables().size());
  for (size_t i = 0; i < placement_.slices().size(); ++i) {
    if (placement_.slices()[i].name == kGlobalStepName) global_step_slice_ = i;
  }
}

void PsClient::set_cluster_id(uint64_t id) {
  for (auto& c : channels_) c->set_cluster_id(id);
  for (auto& c : second_lane_) c->set_cluster_id(id);
}

const std::vector<Connection*>& PsClient::Lane(int lane) {
  if (lane == 1 && second_lane_.empty()) {
    for (size_t k = 0; k < channels_.size(); ++k) {
      ChannelOptions options = channel_options_[k];
      options.cluster_id = channels_[k]->cluster_id();
      second_lane_.push_back(transport_.Connect(options));
      lane_connections_[1].push_back(second_lane_.back().get());
    }
  }
  return lane_connections_[lane];
}

size_t PsClient::max_pushes_in_flight() const { return router_ ? PushLedger::kPushesInFlight : 1; }

PsClient::InFlightPush* PsClient::Open() {
  return flights_.empty() || flights_.back()->pulled ? nullptr : flights_.back().get();
}

void PsClient::RouteByChains(RouteSource* routes, WhenRefused when_refused) {
  router_ = std::make_unique<ReplicaRouter>(routes, index_, when_refused);
}

Status PsClient::CallEveryReplica(const Round& round, MonotonicClock::TimePoint deadline) {
  PST_ASSIGN_OR_RETURN(const std::vector<ShardChain> chains, router_->Chains());
  PendingCalls calls;
  for (const ShardChain& chain : chains) {
    if (!round.send[chain.shard]) continue;
    const OutgoingMessage request =
        ReplicaRouter::Routed(round.requests[chain.shard], chain.shard, chain.epoch);
    for (int t : chain.Tasks()) {
      PST_ASSIGN_OR_RETURN(uint64_t id, SendTo(*channels_[t], request));
      calls.Add(channels_[t].get(), id);
    }
  }
  return calls.WaitAll(deadline, interrupt_);
}

StatusOr<uint64_t> PsClient::SendTo(Connection& channel, const OutgoingMessage& request) {
  // Its replies would be drained, and the push's dropped with them.
  if (!flights_.empty()) return FailedPrecondition("a push is in flight: FinishPush() first");
  return channel.Send(request);
}

Status PsClient::SendShards(const std::vector<Round*>& rounds, ShardCalls* calls) {
  if (!flights_.empty()) return FailedPrecondition("a push is in flight: FinishPush() first");
  return SendRounds(rounds, calls);
}

Status PsClient::SendRounds(const std::vector<Round*>& rounds, ShardCalls* calls) {
  calls->rounds.insert(calls->rounds.end(), rounds.begin(), rounds.end());
  std::vector<ReplicaRouter::Request> routed;
  for (Round* round : rounds) {
    for (size_t k = 0; k < calls->channels.size(); ++k) {
      if (!round->send[k]) continue;
      if (router_) {
        routed.push_back({static_cast<int>(k), &round->requests[k], &round->replies[k]});
        continue;
      }
      PST_ASSIGN_OR_RETURN(uint64_t id, calls->channels[k]->Send(round->requests[k]));
      calls->direct.Add(calls->channels[k], id);
    }
  }
  if (!router_) return Status::OK();
  return router_->Send(calls->channels, routed, &calls->routed);
}

Status PsClient::WaitShards(ShardCalls* calls, const std::vector<Round*>& rounds,
                            bool interruptible) {
  const std::atomic<bool>* interrupt = interruptible ? interrupt_ : nullptr;
  std::vector<bool>& needed = calls->needed;
  needed.clear();
  for (Round* round : calls->rounds) {
    const bool wanted = std::find(rounds.begin(), rounds.end(), round) != rounds.end();
    for (size_t k = 0; k < channels_.size(); ++k) {
      if (round->send[k]) needed.push_back(wanted);
    }
  }
  const auto deadline = channels_[0]->DefaultDeadline();
  if (router_) return router_->Wait(calls->channels, &calls->routed, needed, deadline, interrupt);
  PST_RETURN_IF_ERROR(calls->direct.WaitAll(deadline, interrupt, needed));
  size_t call = 0;
  for (Round* round : calls->rounds) {
    for (size_t k = 0; k < channels_.size(); ++k) {
      if (!round->send[k]) continue;
      if (needed[call]) round->replies[k] = std::move(calls->direct.replies()[call]);
      ++call;
    }
  }
  return Status::OK();
}

Status PsClient::CallShards(const std::vector<Round*>& rounds) {
  ShardCalls& calls = lane0_calls_;
  calls.Clear();
  PST_RETURN_IF_ERROR(SendShards(rounds, &calls));
  return WaitShards(&calls, rounds);
}

void PsClient::Round::Clear() {
  for (OutgoingMessage& request : requests) {
    request.type = wire::MessageType::Invalid;
    request.step = 0;
    request.status = Status::OK();
    request.tensors.clear();
    request.names.clear();
    request.pull_dtype = DType::kFloat32;
    request.extras = nullptr;
  }
  send.assign(send.size(), false);
  stream = StreamBatch();
  for (ReceivedMessage& reply : replies) reply = ReceivedMessage();
}

void PsClient::PullRound(const std::vector<int>& variables, std::vector<Tensor>* values,
                         Wanted* wanted, Round* round_out) {
  Round& round = *round_out;
  wanted->resize(num_shards());
  for (auto& asked : *wanted) asked.clear();
  values->resize(variables.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    const VariableSpec& spec = placement_.variables()[variables[i]];
    Tensor& value = (*values)[i];
    // Kept from the last pull when it is private.
    if (NeedsPrivateBuffer(variables[i]) &&
        (value.empty() || value.shape() != spec.shape || value.buffer().use_count() > 1)) {
      value = Tensor(spec.dtype, spec.shape);
    }
    for (int s : placement_.SlicesOfVariable(variables[i])) {
      const int k = placement_.slices()[s].shard;
      round.requests[k].type = wire::MessageType::PullRequest;
      round.requests[k].pull_dtype = wire_dtype_;
      round.requests[k].names.push_back(placement_.slices()[s].name);
      (*wanted)[k].emplace_back(static_cast<int>(i), s);
      round.send[k] = true;
    }
  }
}

Status PsClient::TakePulled(Round& round, const Wanted& wanted, std::vector<Tensor>* values,
                            const std::vector<size_t>& row_tensors) {
  for (int k = 0; k < num_shards(); ++k) {
    if (!round.send[k]) continue;
    // Whole variables alias the reply's frames (no copy); the reply lives
    // as long as any tensor made from it.
    auto reply = std::make_shared<ReceivedMessage>(std::move(round.replies[k]));
    const auto& tensors = reply->tensors();
    const size_t rows = row_tensors.empty() ? 0 : row_tensors[k];
    if (tensors.size() != wanted[k].size() + rows) {
      return Internal("ps:" + std::to_string(k) + " answered a pull of " +
                      std::to_string(wanted[k].size()) + " slices and " + std::to_string(rows) +
                      " row tensors with " + std::to_string(tensors.size()) + " tensors");
    }
    for (size_t j = 0; j < wanted[k].size(); ++j) {
      const auto [value_index, s] = wanted[k][j];
      const Slice& slice = placement_.slices()[s];
      const TensorView& got = tensors[j];
      const DType expected = Narrowed(slice.dtype) ? wire_dtype_ : slice.dtype;
      if (got.name != slice.name || got.shape != slice.shape || got.dtype != expected) {
        return Internal("ps:" + std::to_string(k) + " sent '" + std::string(got.name) + "' " +
                        ShapeToString(got.shape) + " for slice '" + slice.name + "' " +
                        ShapeToString(slice.shape));
      }
      Tensor& value = (*values)[value_index];
      if (got.dtype == DType::kBFloat16) {
        BFloat16ToFloat(got.bf16(), value.f32() + FirstElement(slice, value.shape()),
                        got.num_elements());
      } else if (placement_.SlicesOfVariable(slice.variable).size() == 1 && got.num_bytes > 0) {
        auto* bytes = static_cast<uint8_t*>(const_cast<void*>(got.data));
        value = Tensor::Wrap(got.dtype, got.shape, std::shared_ptr<uint8_t[]>(reply, bytes));
      } else {
        CopyRowsInto(slice, got.data, &value);
      }
      slice_versions_[s] = got.version;
    }
  }
  return Status::OK();
}

Status PsClient::Pull(const std::vector<int>& variables, std::vector<Tensor>* values) {
  std::vector<TableRows> no_tables;
  return Pull(variables, values, &no_tables);
}

PsClient::ShardPositions PsClient::SplitByShard(const std::vector<TableRows>& tables) const {
  if (tables.empty()) return {};  // a dense model's pulls and pushes
  const uint64_t shards = static_cast<uint64_t>(num_shards());
  ShardPositions positions(tables.size(), std::vector<std::vector<int64_t>>(shards));
  for (size_t t = 0; t < tables.size(); ++t) {
    const std::vector<int64_t>& ids = tables[t].ids;
    for (size_t i = 0; i < ids.size(); ++i) {
      positions[t][static_cast<uint64_t>(ids[i]) % shards].push_back(static_cast<int64_t>(i));
    }
  }
  return positions;
}

std::vector<size_t> PsClient::AddRowPulls(const std::vector<TableRows>& tables,
                                          const ShardPositions& positions, Round* round) {
  if (tables.empty()) return {};  // TakePulled reads it as no rows
  std::vector<size_t> row_tensors(num_shards(), 0);
  for (size_t t = 0; t < tables.size(); ++t) {
    const std::string& name = placement_.tables()[tables[t].table].name;
    for (int k = 0; k < num_shards(); ++k) {
      const std::vector<int64_t>& at = positions[t][k];
      if (at.empty()) continue;
      Tensor ids = Tensor::Uninitialized(DType::kInt64, {static_cast<int64_t>(at.size())});
      for (size_t j = 0; j < at.size(); ++j) ids.i64()[j] = tables[t].ids[at[j]];
      OutgoingMessage& request = round->requests[k];
      request.type = wire::MessageType::PullRequest;
      request.pull_dtype = wire_dtype_;
      request.tensors.push_back({name, 0, std::move(ids), wire::TensorRole::RowIds});
      round->send[k] = true;
      row_tensors[k] += 2;  // rows and their versions
    }
  }
  return row_tensors;
}

Status PsClient::TakePulledRows(const Round& round, const Wanted& wanted,
                                const ShardPositions& positions, std::vector<TableRows>* tables) {
  if (tables->empty()) return Status::OK();
  std::vector<size_t> next(num_shards());
  for (int k = 0; k < num_shards(); ++k) next[k] = wanted[k].size();
  for (size_t t = 0; t < tables->size(); ++t) {
    TableRows& table = (*tables)[t];
    const EmbeddingTableSpec& spec = placement_.tables()[table.table];
    const int64_t n = static_cast<int64_t>(table.ids.size());
    if (table.rows.empty() || table.rows.shape() != Shape{n, spec.dim} ||
        table.rows.buffer().use_count() > 1) {
      table.rows = Tensor::Uninitialized(DType::kFloat32, {n, spec.dim});
    }
    table.versions.resize(n);
    for (int k = 0; k < num_shards(); ++k) {
      const std::vector<int64_t>& at = positions[t][k];
      if (at.empty()) continue;
      const auto& tensors = round.replies[k].tensors();
      const TensorView& rows = tensors[next[k]];
      const TensorView& versions = tensors[next[k] + 1];
      next[k] += 2;
      const int64_t m = static_cast<int64_t>(at.size());
      const DType expected = wire_dtype_;
      if (rows.name != spec.name || rows.shape != Shape{m, spec.dim} || rows.dtype != expected ||
          versions.role != wire::TensorRole::RowVersions || versions.dtype != DType::kInt64 ||
          versions.shape != Shape{m}) {
        return Internal("ps:" + std::to_string(k) + " sent '" + std::string(rows.name) + "' " +
                        ShapeToString(rows.shape) + " for " + std::to_string(m) +
                        " rows of table '" + spec.name + "'");
      }
      float* out = table.rows.f32();
      for (int64_t j = 0; j < m; ++j) {
        float* row = out + at[j] * spec.dim;
        if (expected == DType::kBFloat16) {
          BFloat16ToFloat(rows.bf16() + j * spec.dim, row, spec.dim);
        } else {
          std::copy(rows.f32() + j * spec.dim, rows.f32() + (j + 1) * spec.dim, row);
        }
        table.versions[at[j]] = versions.i64()[j];
      }
    }
  }
  return Status::OK();
}

Status PsClient::Pull(const std::vector<int>& variables, std::vector<Tensor>* values,
                      std::vector<TableRows>* tables) {
  ReusedRound round(&pull_round_);
  PullRound(variables, values, &pull_wanted_, round.get());
  const ShardPositions positions = SplitByShard(*tables);
  const std::vector<size_t> row_tensors = AddRowPulls(*tables, positions, round.get());
  PST_RETURN_IF_ERROR(CallShards({round.get()}));
  PST_RETURN_IF_ERROR(TakePulledRows(*round, pull_wanted_, positions, tables));
  return TakePulled(*round, pull_wanted_, values, row_tensors);
}

Status PsClient::AddRowPushes(const std::vector<TableRows>& tables,
                              const std::vector<Tensor>& row_grads, bool all_shards, Round* round) {
  if (tables.size() != row_grads.size()) {
    return InvalidArgument(std::to_string(row_grads.size()) + " row gradients for " +
                           std::to_string(tables.size()) + " tables");
  }
  const ShardPositions positions = SplitByShard(tables);
  for (size_t t = 0; t < tables.size(); ++t) {
    const EmbeddingTableSpec& spec = placement_.tables()[tables[t].table];
    const int64_t n = static_cast<int64_t>(tables[t].ids.size());
    if (row_grads[t].dtype() != DType::kFloat32 || row_grads[t].shape() != Shape{n, spec.dim} ||
        static_cast<int64_t>(tables[t].versions.size()) != n) {
      return InvalidArgument("the row gradient of table '" + spec.name + "' is " +
                             ShapeToString(row_grads[t].shape()) + " for " + std::to_string(n) +
                             " pulled rows of dim " + std::to_string(spec.dim));
    }
    for (int k = 0; k < num_shards(); ++k) {
      const std::vector<int64_t>& at = positions[t][k];
      if (at.empty() && !all_shards) continue;
      const int64_t m = static_cast<int64_t>(at.size());
      Tensor ids = Tensor::Uninitialized(DType::kInt64, {m});
      Tensor versions = Tensor::Uninitialized(DType::kInt64, {m});
      Tensor rows = Tensor::Uninitialized(wire_dtype_, {m, spec.dim});
      const float* grad = row_grads[t].f32();
      for (int64_t j = 0; j < m; ++j) {
        ids.i64()[j] = tables[t].ids[at[j]];
        versions.i64()[j] = tables[t].versions[at[j]];
        const float* row = grad + at[j] * spec.dim;
        if (wire_dtype_ == DType::kBFloat16) {
          FloatToBFloat16(row, rows.bf16() + j * spec.dim, spec.dim);
        } else {
          std::copy(row, row + spec.dim, rows.f32() + j * spec.dim);
        }
      }
      std::vector<OutTensor>& out = round->requests[k].tensors;
      out.push_back({spec.name, 0, std::move(ids), wire::TensorRole::RowIds});
      out.push_back({spec.name, 0, std::move(rows)});
      out.push_back({spec.name, 0, std::move(versions), wire::TensorRole::RowVersions});
      round->send[k] = true;
    }
  }
  return Status::OK();
}

StatusOr<PushSummary> PsClient::Push(const std::vector<int>& variables,
                                     const std::vector<Tensor>& grads, bool increment_global_step,
                                     const std::vector<TableRows>& tables,
                                     const std::vector<Tensor>& row_grads,
                                     const StreamBatch& stream) {
  PST_RETURN_IF_ERROR(CheckGradients(variables, grads));
  StartPush();
  ReusedRound round(&push_round_);
  (*round).stream = stream;
  PushRound(variables, grads, increment_global_step, 0, 0, round.get());
  PST_RETURN_IF_ERROR(AddRowPushes(tables, row_grads, /*all_shards=*/false, round.get()));
  PST_RETURN_IF_ERROR(CallShards({round.get()}));
  return TakePushed(*round);
}

StatusOr<std::vector<StreamProgress>> PsClient::StreamProgressOf(uint64_t stream) {
  ReusedRound round(&pull_round_);
  for (int k = 0; k < num_shards(); ++k) {
    (*round).requests[k].type = wire::MessageType::StreamsRequest;
    (*round).requests[k].extras = [stream](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.streams = fbb.CreateVector(std::vector<flatbuffers::Offset<wire::StreamProgress>>{
          wire::CreateStreamProgress(fbb, stream)});
      return extras;
    };
    (*round).send[k] = true;
  }
  PST_RETURN_IF_ERROR(CallShards({round.get()}));
  std::vector<StreamProgress> progress;
  for (int k = 0; k < num_shards(); ++k) {
    const auto* streams = (*round).replies[k].header().streams();
    if (streams == nullptr || streams->size() != 1 || streams->Get(0)->stream() != stream) {
      return Internal("ps:" + std::to_string(k) + " did not say how far it trained stream " +
                      std::to_string(stream));
    }
    const wire::StreamProgress& p = *streams->Get(0);
    progress.push_back(
        StreamProgress{p.stream(), p.next_batch(), p.batch_size(), p.examples(), p.complete()});
  }
  return progress;
}

StatusOr<PushSummary> PsClient::SyncPush(const std::vector<int>& variables,
                                         const std::vector<Tensor>& grads, int64_t step,
                                         int replicas, const std::vector<TableRows>& tables,
                                         const std::vector<Tensor>& row_grads) {
  PST_RETURN_IF_ERROR(CheckGradients(variables, grads));
  StartPush();
  ReusedRound round(&push_round_);
  PushRound(variables, grads, false, step, replicas, round.get());
  PST_RETURN_IF_ERROR(AddRowPushes(tables, row_grads, /*all_shards=*/true, round.get()));
  // Not cut short by a signal: a worker leaving before every shard holds
  // its push (its unsent messages dropped at exit) could leave the step
  // applied on some shards only, a torn step no checkpoint can save.
  ShardCalls calls(Lane(0));
  PST_RETURN_IF_ERROR(SendShards({round.get()}, &calls));
  PST_RETURN_IF_ERROR(WaitShards(&calls, {round.get()}, /*interruptible=*/false));
  return TakePushed(*round);
}

StatusOr<PushSummary> PsClient::Push(const std::vector<int>& variables,
                                     const std::vector<Tensor>& grads, bool increment_global_step) {
  return Push(variables, grads, increment_global_step, {}, {});
}

StatusOr<PushSummary> PsClient::PushThenPull(const std::vector<int>& variables,
                                             const std::vector<Tensor>& grads,
                                             bool increment_global_step,
                                             const std::vector<int>& pull_variables,
                                             std::vector<Tensor>* values) {
  PST_RETURN_IF_ERROR(CheckGradients(variables, grads));
  // The push is built first: it carries the versions of the last pull.
  StartPush();
  ReusedRound push(&push_round_);
  PushRound(variables, grads, increment_global_step, 0, 0, push.get());
  ReusedRound pull(&pull_round_);
  PullRound(pull_variables, values, &pull_wanted_, pull.get());
  PST_RETURN_IF_ERROR(CallShards({push.get(), pull.get()}));
  PST_ASSIGN_OR_RETURN(PushSummary summary, TakePushed(*push));
  PST_RETURN_IF_ERROR(TakePulled(*pull, pull_wanted_, values));
  return summary;
}

Status PsClient::StartPushThenPull(const std::vector<int>& variables,
                                   const std::vector<Tensor>& grads, bool increment_global_step,
                                   const std::vector<int>& pull_variables,
                                   std::vector<Tensor>* values) {
  if (Open() != nullptr || flights_.size() >= max_pushes_in_flight()) {
    return FailedPrecondition("a push is in flight: FinishPush() first");
  }
  PST_RETURN_IF_ERROR(SendPushPart(variables, grads, increment_global_step));
  return PullBehindPush(pull_variables, values);
}

Status PsClient::SendPushPart(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                              bool increment_global_step, std::optional<size_t>* not_finite) {
  return SendPart(variables, grads, increment_global_step, not_finite, /*pull_back=*/false);
}

Status PsClient::SendPushPartAndPull(const std::vector<int>& variables,
                                     const std::vector<Tensor>& grads, bool increment_global_step,
                                     std::optional<size_t>* not_finite) {
  std::optional<size_t> unchecked;
  if (not_finite == nullptr) not_finite = &unchecked;
  PST_RETURN_IF_ERROR(SendPart(variables, grads, increment_global_step, not_finite,
                               /*pull_back=*/router_ == nullptr));
  if (*not_finite) return Status::OK();  // nothing sent
  if (router_) return SendPullBehindPush(variables);
  InFlightPush& flight = *Open();
  PendingPull& pull = flight.pulls.emplace_back(num_shards());
  pull.variables = variables;
  for (const int v : variables) pull.values.push_back(std::move(spare_values_[v]));
  PullRound(variables, &pull.values, &pull.wanted, &pull.round);  // for `wanted`; not sent
  pull.carrier = &flight.parts.back();
  return Status::OK();
}

Status PsClient::SendPart(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                          bool increment_global_step, std::optional<size_t>* not_finite,
                          bool pull_back) {
  PST_RETURN_IF_ERROR(CheckGradients(variables, grads));
  const bool starts = Open() == nullptr;
  if (starts && flights_.size() >= max_pushes_in_flight()) {
    return FailedPrecondition("a push is in flight: FinishPush() first");
  }
  if (starts) StartPush();
  Round part(num_shards());
  PushRound(variables, grads, increment_global_step, 0, 0, &part, not_finite, pull_back);
  if (not_finite && *not_finite) return Status::OK();  // nothing sent
  if (starts) {
    // The lane the push before it (if still in flight) does not use.
    const int lane = flights_.empty() ? 0 : 1 - flights_.back()->lane;
    flights_.push_back(std::make_unique<InFlightPush>(lane, Lane(lane)));
  }
  InFlightPush& flight = *flights_.back();
  flight.parts.push_back(std::move(part));
  const Status sent = SendRounds({&flight.parts.back()}, &flight.calls);
  // Abandoned, parts sent before included, as a failed PushThenPull's push.
  if (!sent.ok()) Abandon();
  return sent;
}

Status PsClient::PullBehindPush(const std::vector<int>& variables, std::vector<Tensor>* values) {
  PST_RETURN_IF_ERROR(SendPullBehindPush(variables));
  return TakePullsBehindPush(variables, values);
}

Status PsClient::SendPullBehindPush(const std::vector<int>& variables) {
  if (Open() == nullptr) return FailedPrecondition("no push part in flight to pull behind");
  InFlightPush& flight = *Open();
  PendingPull& pull = flight.pulls.emplace_back(num_shards());
  pull.variables = variables;
  for (const int v : variables) pull.values.push_back(std::move(spare_values_[v]));
  PullRound(variables, &pull.values, &pull.wanted, &pull.round);
  const Status sent = SendRounds({&pull.round}, &flight.calls);
  if (!sent.ok()) Abandon();
  return sent;
}

Status PsClient::TakePullsBehindPush(const std::vector<int>& variables,
                                     std::vector<Tensor>* values) {
  if (Open() == nullptr || Open()->pulls.empty()) {
    return FailedPrecondition("no pull in flight behind a push");
  }
  InFlightPush& flight = *Open();
  flight.pulled = true;
  std::vector<Round*> rounds;
  for (PendingPull& pull : flight.pulls) {
    rounds.push_back(pull.carrier ? pull.carrier : &pull.round);
  }
  Status taken = WaitShards(&flight.calls, rounds);
  std::map<int, Tensor*> pulled;  // by variable
  for (PendingPull& pull : flight.pulls) {
    if (pull.carrier && taken.ok()) {
      // Its push results first: taking the values takes the replies.
      taken = AddPushed(*pull.carrier, &flight.taken);
      flight.taken_parts.push_back(pull.carrier);
    }
    if (taken.ok()) {
      taken = TakePulled(pull.carrier ? *pull.carrier : pull.round, pull.wanted, &pull.values);
    }
    for (size_t i = 0; i < pull.variables.size(); ++i) pulled[pull.variables[i]] = &pull.values[i];
  }
  values->resize(variables.size());
  for (size_t i = 0; i < variables.size() && taken.ok(); ++i) {
    auto it = pulled.find(variables[i]);
    if (it == pulled.end()) {
      taken = InvalidArgument("variable " + std::to_string(variables[i]) + " was not pulled");
    } else {
      // The last step's buffer, free now, serves the next pull of it.
      if (NeedsPrivateBuffer(variables[i])) spare_values_[variables[i]] = std::move((*values)[i]);
      (*values)[i] = std::move(*it->second);
    }
  }
  if (!taken.ok()) Abandon();
  return taken;
}

Status PsClient::FinishOldest(PushSummary* summary) {
  const std::unique_ptr<InFlightPush> flight = std::move(flights_.front());
  flights_.pop_front();
  std::vector<Round*> parts;
  for (Round& part : flight->parts) {
    const auto& taken = flight->taken_parts;
    if (std::find(taken.begin(), taken.end(), &part) == taken.end()) parts.push_back(&part);
  }
  PST_RETURN_IF_ERROR(WaitShards(&flight->calls, parts));
  summary->Add(flight->taken);
  for (const Round* part : parts) PST_RETURN_IF_ERROR(AddPushed(*part, summary));
  return Status::OK();
}

StatusOr<std::optional<PushSummary>> PsClient::FinishPushesBeyond(size_t keep) {
  if (Open() == nullptr && flights_.size() <= keep) return std::optional<PushSummary>();
  PushSummary summary;
  while (Open() != nullptr || flights_.size() > keep) {
    if (Status s = FinishOldest(&summary); !s.ok()) {
      Abandon();
      return s;
    }
  }
  return std::optional<PushSummary>(summary);
}

StatusOr<std::optional<PushSummary>> PsClient::FinishPush() { return FinishPushesBeyond(0); }

StatusOr<std::optional<PushSummary>> PsClient::MakeRoomForPush() {
  return FinishPushesBeyond(max_pushes_in_flight() - 1);
}

StatusOr<PushSummary> PsClient::SyncPush(const std::vector<int>& variables,
                                         const std::vector<Tensor>& grads, int64_t step,
                                         int replicas) {
  return SyncPush(variables, grads, step, replicas, {}, {});
}

void PsClient::StartPush() {
  if (router_) router_->StartPush();
}

Status PsClient::CheckGradients(const std::vector<int>& variables,
                                const std::vector<Tensor>& grads) const {
  if (variables.size() != grads.size()) {
    return InvalidArgument(std::to_string(grads.size()) + " gradients for " +
                           std::to_string(variables.size()) + " variables");
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    const VariableSpec& spec = placement_.variables()[variables[i]];
    // Slices are cut by the variable's rows, so a gradient of another shape
    // with as many elements would reach every shard looking right.
    if (grads[i].dtype() != spec.dtype || grads[i].shape() != spec.shape) {
      return InvalidArgument("the gradient of '" + spec.name + "' is " +
                             DTypeName(grads[i].dtype()) + " " + ShapeToString(grads[i].shape()) +
                             "; the variable is " + DTypeName(spec.dtype) + " " +
                             ShapeToString(spec.shape));
    }
  }
  return Status::OK();
}

void PsClient::PushRound(const std::vector<int>& variables, const std::vector<Tensor>& grads,
                         bool increment_global_step, int64_t step, int replicas, Round* round_out,
                         std::optional<size_t>* not_finite, bool pull_back) {
  Round& round = *round_out;
  for (auto& r : round.requests) {
    r.type = wire::MessageType::PushRequest;
    r.step = step;
    if (pull_back) r.pull_dtype = wire_dtype_;
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    const int64_t n = grads[i].num_elements();
    // A narrowed gradient is checked as it is narrowed, below.
    if (not_finite && !Narrowed(grads[i].dtype()) && FirstNonFinite(grads[i].f32(), n) < n) {
      *not_finite = i;
      return;
    }
    const auto& slices = placement_.SlicesOfVariable(variables[i]);
    for (int s : slices) {
      const Slice& slice = placement_.slices()[s];
      // A whole variable goes zero-copy; a slice needs its rows cut out.
      Tensor part;
      if (Narrowed(slice.dtype)) {
        part = Tensor::Uninitialized(DType::kBFloat16, slice.shape);
        const float* from = grads[i].f32() + FirstElement(slice, grads[i].shape());
        const int64_t m = part.num_elements();
        if (!not_finite) {
          FloatToBFloat16(from, part.bf16(), m);
        } else if (FloatToBFloat16Checked(from, part.bf16(), m) < m) {
          *not_finite = i;
          return;
        }
      } else {
        part = slices.size() == 1 ? grads[i] : ExtractRows(slice, grads[i]);
      }
      round.requests[slice.shard].tensors.push_back({slice.name, slice_versions_[s], part});
      round.send[slice.shard] = true;
    }
  }
  int step_shard = -1;
  if (increment_global_step) {
    CHECK_GE(global_step_slice_, 0) << "placement has no global step";
    step_shard = placement_.slices()[global_step_slice_].shard;
    round.send[step_shard] = true;
  }
  const StreamBatch stream = round.stream;
  for (int k = 0; k < num_shards(); ++k) {
    if (stream.valid()) round.send[k] = true;  // every shard records the batch
    if (!round.send[k]) continue;
    const bool increment = k == step_shard;
    const PushId id = router_ ? router_->NextPushId(k) : PushId{};
    // Without any, no parameters: the messages stay as they were.
    if (!increment && replicas == 0 && !id.valid() && !pull_back && !stream.valid()) continue;
    round.requests[k].extras = [increment, replicas, id, pull_back,
                                stream](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      flatbuffers::Offset<wire::StreamBatch> mark;
      if (stream.valid()) {
        mark = wire::CreateStreamBatch(fbb, stream.stream, stream.batch, stream.batch_size,
                                       stream.examples, stream.last);
      }
      extras.push = wire::CreatePushParams(fbb, increment, replicas, id.incarnation, id.sequence,
                                           id.part, pull_back, mark);
      return extras;
    };
  }
}

StatusOr<PushSummary> PsClient::TakePushed(const Round& round) {
  PushSummary summary;
  PST_RETURN_IF_ERROR(AddPushed(round, &summary));
  return summary;
}

Status PsClient::AddPushed(const Round& round, PushSummary* summary) {
  for (int k = 0; k < num_shards(); ++k) {
    if (!round.send[k]) continue;
    const wire::PushResult* r = round.replies[k].header().push_result();
    if (r == nullptr) return Internal("ps:" + std::to_string(k) + " sent no push result");
    summary->Add(PushSummary{r->applied(), r->dropped(), r->scaled(), r->max_staleness(),
                             r->global_step(), r->stale(), r->duplicate()});
  }
  return Status::OK();
}

StatusOr<int64_t> PsClient::GlobalStep() {
  CHECK_EQ(placement_.variables()[0].name, kGlobalStepName);
  std::vector<Tensor> values;
  PST_RETURN_IF_ERROR(Pull({0}, &values));
  return values[0].i64()[0];
}

void TakeWritableGradients(std::vector<Tensor>* grads, std::vector<std::vector<Tensor>>* spares) {
  auto shared = [](const std::vector<Tensor>& tensors) {
    return std::any_of(tensors.begin(), tensors.end(),
                       [](const Tensor& t) { return t.buffer().use_count() > 1; });
  };
  for (std::vector<Tensor>& spare : *spares) {
    if (!shared(*grads)) return;
    std::swap(*grads, spare);
  }
  if (shared(*grads)) grads->clear();
}

}  // namespace pst
