#include "ps/shard_admin.h"

#include <map>

#include "ps/chain_wire.h"

namespace pst {
namespace {

// The same request of `type` to every shard.
void FillCheckpointRequests(wire::MessageType type, const std::string& name, int64_t step,
                            std::vector<OutgoingMessage>* requests, std::vector<bool>* send) {
  send->assign(requests->size(), true);
  for (auto& r : *requests) {
    r.type = type;
    r.step = step;
    r.extras = [name](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.checkpoint = wire::CreateCheckpointParams(fbb, fbb.CreateString(name));
      return extras;
    };
  }
}

wire::StalenessPolicy ToWire(StalenessPolicy p) {
  switch (p) {
    case StalenessPolicy::kApply: return wire::StalenessPolicy::Apply;
    case StalenessPolicy::kDrop: return wire::StalenessPolicy::Drop;
    case StalenessPolicy::kScale: return wire::StalenessPolicy::Scale;
  }
  return wire::StalenessPolicy::Apply;
}

// int64 tensors laid end to end ([0] for none).
Tensor ConcatIds(const std::vector<const TensorView*>& parts) {
  int64_t n = 0;
  for (const TensorView* v : parts) n += v->num_elements();
  Tensor out = Tensor::Uninitialized(DType::kInt64, {n});
  int64_t at = 0;
  for (const TensorView* v : parts) {
    std::copy(v->i64(), v->i64() + v->num_elements(), out.i64() + at);
    at += v->num_elements();
  }
  return out;
}

// [n_i, dim] float32 tensors stacked into one [sum n_i, dim]; Internal when
// their dims differ.
StatusOr<Tensor> ConcatRows(const std::string& table, const std::vector<const TensorView*>& parts) {
  int64_t n = 0;
  for (const TensorView* v : parts) n += v->shape[0];
  const int64_t dim = parts.front()->shape[1];
  Tensor out = Tensor::Uninitialized(DType::kFloat32, {n, dim});
  int64_t at = 0;
  for (const TensorView* v : parts) {
    if (v->shape[1] != dim)
      return Internal("the ps sent rows of '" + table + "' of different dims");
    std::copy(v->f32(), v->f32() + v->num_elements(), out.f32() + at * dim);
    at += v->shape[0];
  }
  return out;
}

}  // namespace

Status ShardAdmin::SendChains(const std::vector<ShardChain>& chains,
                              MonotonicClock::TimePoint deadline) {
  PendingCalls calls;
  for (const ShardChain& chain : chains) {
    OutgoingMessage request;
    request.type = wire::MessageType::ChainRequest;
    request.extras = [chain](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.chains = ChainsToWire(fbb, {chain});
      return extras;
    };
    for (int t : chain.Tasks()) {
      PST_ASSIGN_OR_RETURN(uint64_t id, client_->SendTo(*client_->channels_[t], request));
      calls.Add(client_->channels_[t].get(), id);
    }
  }
  return calls.WaitAll(deadline, client_->interrupt_);
}

Status ShardAdmin::Initialize(const ShardConfig& config, const std::vector<Tensor>& values,
                              const ContainerInit& container, const TableSettings& tables) {
  PsClient::Round round = InitRound(config, values, container, tables);
  std::fill(client_->slice_versions_.begin(), client_->slice_versions_.end(), 0);
  if (client_->router_)
    return client_->CallEveryReplica(round, client_->channels_[0]->DefaultDeadline());
  return client_->CallShards({&round});
}

Status ShardAdmin::InitializeTask(int task, const ShardConfig& config,
                                  const std::vector<Tensor>& values, const TableSettings& tables) {
  CHECK(client_->router_) << "InitializeTask is for replicated shards";
  PST_ASSIGN_OR_RETURN(const std::vector<ShardChain> chains, client_->router_->Chains());
  PsClient::Round round = InitRound(config, values, ContainerInit(), tables);
  PendingCalls calls;
  for (const ShardChain& chain : chains) {
    const bool named = chain.Names(task);
    if (!named) continue;
    PST_ASSIGN_OR_RETURN(
        uint64_t id, client_->SendTo(*client_->channels_[task],
                                     ReplicaRouter::Routed(round.requests[chain.shard], chain.shard,
                                                           chain.epoch)));
    calls.Add(client_->channels_[task].get(), id);
  }
  return calls.WaitAll(client_->channels_[task]->DefaultDeadline(), client_->interrupt_);
}

PsClient::Round ShardAdmin::InitRound(const ShardConfig& config, const std::vector<Tensor>& values,
                                      const ContainerInit& container, const TableSettings& tables) {
  CHECK_EQ(values.size(), client_->placement_.variables().size());
  const int shards = client_->num_shards();
  PsClient::Round round(shards);
  std::vector<OutgoingMessage>& requests = round.requests;
  std::vector<std::vector<std::string>> moving_averages(shards);
  for (size_t s = 0; s < client_->placement_.slices().size(); ++s) {
    const Slice& slice = client_->placement_.slices()[s];
    const Tensor& full = values[slice.variable];
    const bool whole = client_->placement_.SlicesOfVariable(slice.variable).size() == 1;
    requests[slice.shard].tensors.push_back(
        {slice.name, 0, whole ? full : ExtractRows(slice, full)});
    if (client_->placement_.variables()[slice.variable].moving_average) {
      moving_averages[slice.shard].push_back(slice.name);
    }
  }
  for (int k = 0; k < shards; ++k) {
    const bool holds_step = client_->global_step_slice_ >= 0 &&
                            client_->placement_.slices()[client_->global_step_slice_].shard == k;
    requests[k].type = wire::MessageType::InitRequest;
    requests[k].extras = [this, config, holds_step, container, tables,
                          averages = moving_averages[k]](flatbuffers::FlatBufferBuilder& fbb) {
      const OptimizerConfig& o = config.optimizer;
      auto optimizer = wire::CreateOptimizerParams(
          fbb, fbb.CreateString(o.name), o.learning_rate, o.momentum, o.use_nesterov,
          o.initial_accumulator, o.beta1, o.beta2, o.epsilon, o.l1, o.l2, o.ftrl_beta,
          fbb.CreateString(config.lr_schedule), config.lr_decay_steps, config.lr_decay_rate,
          config.lr_warmup_steps, config.lr_min, config.weight_decay);
      std::vector<flatbuffers::Offset<wire::TableParams>> table_params;
      for (const EmbeddingTableSpec& t : client_->placement_.tables()) {
        table_params.push_back(wire::CreateTableParams(
            fbb, fbb.CreateString(t.name), t.dim, t.rows, t.rows > 0 ? 0 : tables.capacity,
            tables.min_count, tables.seed, tables.init_scale, tables.l2,
            tables.on_disk && t.rows == 0, tables.cache_rows));
      }
      const auto table_vector =
          table_params.empty()
              ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::TableParams>>>()
              : fbb.CreateVector(table_params);
      // Absent when there are none: the messages of a model without batch
      // norm stay as they were.
      const auto moving_average_vector =
          averages.empty()
              ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>()
              : fbb.CreateVectorOfStrings(averages);
      HeaderExtras extras;
      extras.init = wire::CreateInitParams(
          fbb, optimizer, ToWire(config.staleness_policy), config.max_staleness,
          fbb.CreateString(holds_step ? kGlobalStepName : ""),
          config.mode == TrainingMode::kSync ? wire::TrainingMode::Sync : wire::TrainingMode::Async,
          config.replicas_to_aggregate, container.chief_port, container.reset, table_vector,
          moving_average_vector);
      return extras;
    };
  }
  round.send.assign(shards, true);
  return round;
}

StatusOr<std::vector<FileDigest>> ShardAdmin::SaveCheckpoint(const std::string& name,
                                                             int64_t step) {
  PsClient::Round round(client_->num_shards());
  FillCheckpointRequests(wire::MessageType::SaveRequest, name, step, &round.requests, &round.send);
  PST_RETURN_IF_ERROR(client_->CallShards({&round}));
  std::vector<FileDigest> digests;
  for (int k = 0; k < client_->num_shards(); ++k) {
    const wire::CheckpointParams* c = round.replies[k].header().checkpoint();
    if (c == nullptr) return Internal("ps:" + std::to_string(k) + " sent no part digest");
    digests.push_back({c->part_bytes(), c->part_crc32()});
  }
  return digests;
}

Status ShardAdmin::RestoreCheckpoint(const std::string& name, int64_t step) {
  PsClient::Round round(client_->num_shards());
  FillCheckpointRequests(wire::MessageType::RestoreRequest, name, step, &round.requests,
                         &round.send);
  return client_->CallShards({&round});
}

Status ShardAdmin::SetLrLowerings(int lowerings, MonotonicClock::TimePoint deadline) {
  if (client_->router_) {
    PsClient::Round round(client_->num_shards());
    for (auto& r : round.requests) {
      r.type = wire::MessageType::LrLoweringsRequest;
      r.step = lowerings;
    }
    round.send.assign(client_->num_shards(), true);
    return client_->CallEveryReplica(round, deadline);
  }
  PendingCalls calls;
  for (auto& channel : client_->channels_) {
    OutgoingMessage request;
    request.type = wire::MessageType::LrLoweringsRequest;
    request.step = lowerings;
    PST_ASSIGN_OR_RETURN(uint64_t id, client_->SendTo(*channel, request));
    calls.Add(channel.get(), id);
  }
  return calls.WaitAll(deadline, client_->interrupt_);
}

StatusOr<std::vector<CutRows>> ShardAdmin::CutChangedRows(bool with_values,
                                                          MonotonicClock::TimePoint deadline) {
  if (client_->router_)
    return FailedPrecondition("replicated shards (--ps_replicas > 1) are not exported yet");
  PendingCalls calls;
  for (auto& channel : client_->channels_) {
    OutgoingMessage request;
    request.type = wire::MessageType::ExportCutRequest;
    request.step = with_values ? 1 : 0;
    PST_ASSIGN_OR_RETURN(uint64_t id, client_->SendTo(*channel, request));
    calls.Add(channel.get(), id);
  }
  PST_RETURN_IF_ERROR(calls.WaitAll(deadline, client_->interrupt_));
  // Each table's ids, rows and removed keys from every shard, laid end to end.
  struct Parts {
    std::vector<const TensorView*> ids, rows, removed;
  };
  std::map<std::string, Parts> parts;
  constexpr std::string_view kRemoved = "@removed";
  for (const ReceivedMessage& reply : calls.replies()) {
    const std::vector<TensorView>& t = reply.tensors();
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string name(t[i].name);
      if (t[i].role != wire::TensorRole::RowIds || t[i].dtype != DType::kInt64) {
        return Internal("a ps sent a malformed export cut of '" + name + "'");
      }
      if (name.size() > kRemoved.size() &&
          name.compare(name.size() - kRemoved.size(), kRemoved.size(), kRemoved) == 0) {
        parts[name.substr(0, name.size() - kRemoved.size())].removed.push_back(&t[i]);
        continue;
      }
      if (i + 1 >= t.size() || t[i + 1].dtype != DType::kFloat32 || t[i + 1].shape.size() != 2 ||
          t[i + 1].shape[0] != t[i].num_elements() || t[i].name != t[i + 1].name) {
        return Internal("a ps sent a malformed export cut of '" + name + "'");
      }
      parts[name].ids.push_back(&t[i]);
      parts[name].rows.push_back(&t[++i]);
    }
  }
  std::vector<CutRows> out;
  for (const auto& [table, p] : parts) {
    if (p.rows.empty()) return Internal("a ps sent removed keys of '" + table + "' without rows");
    PST_ASSIGN_OR_RETURN(Tensor rows, ConcatRows(table, p.rows));
    out.push_back({table, ConcatIds(p.ids), std::move(rows), ConcatIds(p.removed)});
  }
  return out;
}

StatusOr<ListedRows> ShardAdmin::ListTableRows(int shard, const std::string& table, int64_t cursor,
                                               int64_t max_rows) {
  if (client_->router_) {
    return FailedPrecondition("replicated shards (--ps_replicas > 1) are not listed yet");
  }
  OutgoingMessage request;
  request.type = wire::MessageType::TableRowsRequest;
  request.step = max_rows;
  Tensor at(DType::kInt64, {1});
  at.i64()[0] = cursor;
  request.tensors.push_back({table, 0, std::move(at), wire::TensorRole::RowIds});
  PST_ASSIGN_OR_RETURN(uint64_t id, client_->SendTo(*client_->channels_[shard], request));
  PST_ASSIGN_OR_RETURN(
      ReceivedMessage reply,
      client_->channels_[shard]->Receive(id, client_->channels_[shard]->DefaultDeadline()));
  const std::vector<TensorView>& t = reply.tensors();
  if (t.size() != 2 || t[0].dtype != DType::kInt64 || t[1].dtype != DType::kFloat32 ||
      t[1].shape.size() != 2 || t[1].shape[0] != t[0].num_elements() || reply.step() < -1 ||
      t[0].name != table || t[1].name != table) {
    return Internal("ps:" + std::to_string(shard) + " sent malformed rows of table '" + table +
                    "'");
  }
  const std::vector<const TensorView*> ids{&t[0]}, rows{&t[1]};
  PST_ASSIGN_OR_RETURN(Tensor values, ConcatRows(table, rows));
  return ListedRows{ConcatIds(ids), std::move(values), reply.step()};
}

StatusOr<ShardStatus> ShardAdmin::GetShardStatus(int shard, MonotonicClock::TimePoint deadline,
                                                 int replica) {
  OutgoingMessage request;
  request.type = wire::MessageType::ShardStatusRequest;
  // The epoch is not checked for a status request: any will do.
  if (replica >= 0) request = ReplicaRouter::Routed(request, replica, 0);
  PST_ASSIGN_OR_RETURN(uint64_t id, client_->SendTo(*client_->channels_[shard], request));
  PST_ASSIGN_OR_RETURN(ReceivedMessage reply, client_->channels_[shard]->Receive(id, deadline));
  const wire::ShardStats* s = reply.header().shard_stats();
  if (s == nullptr) return Internal("ps:" + std::to_string(shard) + " sent no stats");
  ShardStatus status;
  status.store.initialized = s->initialized();
  status.store.variables = s->variables();
  status.store.bytes = s->bytes();
  status.store.updates_applied = s->updates_applied();
  status.store.gradients_dropped = s->gradients_dropped();
  status.store.gradients_scaled = s->gradients_scaled();
  status.store.staleness_sum = s->staleness_sum();
  status.store.staleness_count = s->staleness_count();
  status.store.staleness_max = s->staleness_max();
  status.store.global_step = s->global_step();
  status.store.sync_step = s->sync_step();
  status.store.stale_pushes = s->stale_pushes();
  status.store.duplicate_pushes = s->duplicate_pushes();
  status.store.lr_lowerings = s->lr_lowerings();
  if (s->aggregated_per_worker()) {
    status.store.aggregated_per_worker.assign(s->aggregated_per_worker()->begin(),
                                              s->aggregated_per_worker()->end());
  }
  status.bytes_in = s->bytes_in();
  status.bytes_out = s->bytes_out();
  status.queue_depth = s->queue_depth();
  if (s->tables()) {
    for (const wire::TableLoad* t : *s->tables()) {
      EmbeddingTableStats ts;
      ts.rows_held = t->rows_held();
      ts.rows_created = t->rows_created();
      ts.rows_evicted = t->rows_evicted();
      ts.keys_refused = t->keys_refused();
      ts.rows_dropped = t->rows_dropped();
      ts.rows_applied = t->rows_applied();
      ts.bytes = t->bytes();
      status.tables.push_back({t->name() ? t->name()->str() : "", ts});
    }
  }
  if (s->replicas()) {
    for (const wire::ReplicaState* r : *s->replicas()) {
      ReplicaLoad load{r->shard(),  r->epoch(),         r->primary(),         r->deposed(),
                       r->rounds(), r->bytes_shipped(), r->shipments_taken(), r->filled_at_epoch()};
      if (r->backups()) load.backups.assign(r->backups()->begin(), r->backups()->end());
      status.replicas.push_back(std::move(load));
    }
  }
  if (s->containers()) {
    for (const wire::ContainerLoad* c : *s->containers()) {
      status.containers.push_back({c->name() ? c->name()->str() : "", c->variables(), c->bytes(),
                                   c->updates_applied(), c->pulls(), c->pushes()});
    }
  }
  return status;
}

Status ShardAdmin::Shutdown(int shard, MonotonicClock::TimePoint deadline) {
  OutgoingMessage request;
  request.type = wire::MessageType::ShutdownRequest;
  PST_ASSIGN_OR_RETURN(uint64_t id, client_->SendTo(*client_->channels_[shard], request));
  return client_->channels_[shard]->Receive(id, deadline).status();
}

}  // namespace pst
