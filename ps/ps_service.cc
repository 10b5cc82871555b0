#include "ps/ps_service.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <limits>
#include <utility>
#include <vector>

#include "common/bfloat16.h"
#include "ps/chain_wire.h"
#include "ps/sparse_wire.h"
#include "transport/message_types.h"

namespace pst {
namespace {

// The answer to `request`, of the reply type that answers its type.
OutgoingMessage ReplyTo(const ReceivedMessage& request, Status status = Status::OK()) {
  OutgoingMessage reply;
  reply.type = ReplyTypeOf(request.type());
  reply.status = std::move(status);
  return reply;
}

StatusOr<ShardConfig> ConfigFromWire(const wire::InitParams* init) {
  if (init == nullptr || init->optimizer() == nullptr || init->optimizer()->name() == nullptr) {
    return InvalidArgument("init request without optimizer parameters");
  }
  const wire::OptimizerParams& o = *init->optimizer();
  ShardConfig config;
  config.optimizer.name = o.name()->str();
  config.optimizer.learning_rate = o.learning_rate();
  config.optimizer.momentum = o.momentum();
  config.optimizer.use_nesterov = o.use_nesterov();
  config.optimizer.initial_accumulator = o.initial_accumulator();
  config.optimizer.beta1 = o.beta1();
  config.optimizer.beta2 = o.beta2();
  config.optimizer.epsilon = o.epsilon();
  config.optimizer.l1 = o.l1();
  config.optimizer.l2 = o.l2();
  config.optimizer.ftrl_beta = o.ftrl_beta();
  if (o.lr_schedule() != nullptr) config.lr_schedule = o.lr_schedule()->str();
  config.lr_decay_steps = o.lr_decay_steps();
  config.lr_decay_rate = o.lr_decay_rate();
  config.lr_warmup_steps = o.lr_warmup_steps();
  config.lr_min = o.lr_min();
  config.weight_decay = o.weight_decay();
  switch (init->staleness_policy()) {
    case wire::StalenessPolicy::Apply: config.staleness_policy = StalenessPolicy::kApply; break;
    case wire::StalenessPolicy::Drop: config.staleness_policy = StalenessPolicy::kDrop; break;
    case wire::StalenessPolicy::Scale: config.staleness_policy = StalenessPolicy::kScale; break;
    default: return InvalidArgument("unknown staleness policy");
  }
  config.max_staleness = init->max_staleness();
  config.mode =
      init->mode() == wire::TrainingMode::Sync ? TrainingMode::kSync : TrainingMode::kAsync;
  config.replicas_to_aggregate = init->replicas_to_aggregate();
  if (init->global_step_variable()) {
    config.global_step_variable = init->global_step_variable()->str();
  }
  if (init->moving_averages() != nullptr) {
    for (const flatbuffers::String* name : *init->moving_averages()) {
      if (name == nullptr) return InvalidArgument("a moving average without a name");
      config.moving_averages.push_back(name->str());
    }
  }
  return config;
}

// The embedding tables an init request asks for, as this shard holds them.
// `storage_dir`: this ps's folder for tables on disk ("" when it has none).
StatusOr<std::vector<EmbeddingTableConfig>> TablesFromWire(const wire::InitParams* init, int shard,
                                                           int num_shards,
                                                           const std::string& storage_dir) {
  std::vector<EmbeddingTableConfig> tables;
  if (init == nullptr || init->tables() == nullptr) return tables;
  for (const wire::TableParams* t : *init->tables()) {
    if (t == nullptr || t->name() == nullptr) return InvalidArgument("a table without a name");
    EmbeddingTableConfig c;
    c.name = t->name()->str();
    c.dim = t->dim();
    c.rows = t->rows();
    c.capacity = t->capacity();
    c.min_count = t->min_count();
    c.seed = t->seed();
    c.init_scale = t->init_scale();
    c.l2 = t->l2();
    c.shard = shard;
    c.num_shards = num_shards;
    if (t->on_disk()) {
      // The folder is this ps's own flag, never the wire's: a peer cannot
      // make the ps empty a folder of its choosing.
      if (storage_dir.empty()) {
        return InvalidArgument("table '" + c.name +
                               "': the chief asks for disk storage but this ps was started "
                               "without --embedding_storage=disk:DIR");
      }
      c.storage_dir = storage_dir;
      c.cache_rows = t->cache_rows();
    }
    tables.push_back(std::move(c));
  }
  return tables;
}

// True for the requests that change or stop the shard as a whole, which
// only the chief may send.
bool IsAdmin(wire::MessageType request) {
  switch (request) {
    case wire::MessageType::InitRequest:
    case wire::MessageType::SaveRequest:
    case wire::MessageType::RestoreRequest:
    case wire::MessageType::LrLoweringsRequest:
    case wire::MessageType::ExportCutRequest:
    case wire::MessageType::TableRowsRequest:
    case wire::MessageType::ChainRequest:
    case wire::MessageType::ShutdownRequest: return true;
    default: return false;
  }
}

StreamBatch StreamBatchOf(const wire::PushParams* p) {
  if (p == nullptr || p->stream() == nullptr) return {};
  const wire::StreamBatch& m = *p->stream();
  return StreamBatch{m.stream(), m.batch(), m.batch_size(), m.examples(), m.last()};
}

Tensor ToBFloat16(const Tensor& values) {
  Tensor narrow = Tensor::Uninitialized(DType::kBFloat16, values.shape());
  FloatToBFloat16(values.f32(), narrow.bf16(), values.num_elements());
  return narrow;
}

}  // namespace

OutgoingMessage PsService::Handle(const ReceivedMessage& request, std::string_view peer_address,
                                  RequestContext* context) {
  const bool from_chief = SentByChief(request, peer_address);
  if (from_chief) {
    last_chief_contact_.store(clock_.Now().time_since_epoch().count());
  }
  if (IsAdmin(request.type()) && options_.chief_addresses && !from_chief) {
    return ReplyTo(request, RefuseAdmin(request, peer_address));
  }
  switch (request.type()) {
    case wire::MessageType::InitRequest: return HandleInit(request);
    case wire::MessageType::PullRequest: return HandlePull(request);
    case wire::MessageType::PushRequest: return HandlePush(request, context);
    case wire::MessageType::ShardStatusRequest: return HandleStatus(request);
    case wire::MessageType::SaveRequest: return HandleSave(request);
    case wire::MessageType::RestoreRequest: return HandleRestore(request);
    case wire::MessageType::LrLoweringsRequest: return HandleLrLowerings(request);
    case wire::MessageType::ShutdownRequest: return HandleShutdown(request);
    case wire::MessageType::ChainRequest: return HandleChain(request);
    case wire::MessageType::ShipRequest: return HandleShip(request);
    case wire::MessageType::StreamsRequest: return HandleStreams(request);
    case wire::MessageType::ExportCutRequest: return HandleExportCut(request);
    case wire::MessageType::TableRowsRequest: return HandleTableRows(request);
    default: {
      // Not a ps request: a ps has no reply of its own for it.
      OutgoingMessage refusal;
      refusal.type = wire::MessageType::ErrorReply;
      refusal.status = InvalidArgument(std::string("a ps does not serve ") +
                                       wire::EnumNameMessageType(request.type()));
      return refusal;
    }
  }
}

bool PsService::Quick(const ReceivedMessage& request) const {
  switch (request.type()) {
    case wire::MessageType::PullRequest:
    case wire::MessageType::ShardStatusRequest: return true;
    // A backup's restore of a shipment is a copy under the replica's lock;
    // the primary's round (and so its pushes' acknowledgements) waits on it.
    case wire::MessageType::ShipRequest: return request.total_bytes() <= kQuickPushBytes;
    case wire::MessageType::PushRequest: {
      if (request.total_bytes() > kQuickPushBytes) return false;
      StatusOr<std::shared_ptr<Container>> c = Find(request);
      // A refusal is quick to send.
      return !c.ok() || (*c)->store.mode() == TrainingMode::kAsync;
    }
    default: return false;
  }
}

std::shared_ptr<Container> PsService::FindNamed(const std::string& name) const {
  MutexLock lock(named_mu_);
  auto it = named_.find(name);
  return it == named_.end() ? nullptr : it->second;
}

StatusOr<std::shared_ptr<Replica>> PsService::FindReplica(const ReceivedMessage& request) const {
  const wire::ReplicaRoute& route = *request.header().replica();
  const bool served = request.type() == wire::MessageType::PullRequest ||
                      request.type() == wire::MessageType::PushRequest;
  return served ? replicas_.FindPrimary(route.shard(), route.epoch())
                : replicas_.Find(route.shard());
}

int PsService::ShardOf(const ReceivedMessage& request) const {
  const wire::ReplicaRoute* route = request.header().replica();
  return route != nullptr ? route->shard() : options_.shard;
}

StatusOr<std::shared_ptr<Container>> PsService::Find(const ReceivedMessage& request) const {
  if (request.header().replica() != nullptr) {
    PST_ASSIGN_OR_RETURN(std::shared_ptr<Replica> replica, FindReplica(request));
    Container* container = &replica->container;
    return std::shared_ptr<Container>(std::move(replica), container);  // keeps the replica
  }
  const flatbuffers::String* name = request.header().container();
  if (name == nullptr || name->size() == 0) {
    // Aliases default_ without owning it.
    return std::shared_ptr<Container>(std::shared_ptr<Container>(),
                                      const_cast<Container*>(&default_));
  }
  // The client names the ps in front of these.
  std::shared_ptr<Container> c = FindNamed(name->str());
  if (c == nullptr) return FailedPrecondition("container '" + name->str() + "' is not initialized");
  if (c->cluster_id != request.header().cluster_id()) {
    // Names neither the owner nor its variables.
    return PermissionDenied("container '" + name->str() + "' holds another job's variables");
  }
  return c;
}

std::string PsService::NamedContainers() const {
  MutexLock lock(named_mu_);
  std::string names;
  for (const auto& [name, c] : named_) names += (names.empty() ? "" : ", ") + name;
  return names;
}

void PsService::ReleaseNamedContainers() {
  std::map<std::string, std::shared_ptr<Container>> named;
  {
    MutexLock lock(named_mu_);
    named.swap(named_);
  }
  for (const auto& [name, c] : named) {
    LOG(INFO) << "dropping container '" << name << "': this ps stops before its job released it";
  }
}

std::vector<ContainerLoad> PsService::Loads() const {
  std::vector<std::shared_ptr<const Container>> containers;
  if (default_.store.initialized()) {
    containers.emplace_back(std::shared_ptr<const Container>(), &default_);
  }
  {
    MutexLock lock(named_mu_);
    for (const auto& [name, c] : named_) containers.push_back(c);
  }
  std::vector<ContainerLoad> loads;
  for (const auto& c : containers) {
    const StoreStats s = c->store.Stats();
    loads.push_back(
        {c->name, s.variables, s.bytes, s.updates_applied, c->pulls.load(), c->pushes.load()});
  }
  return loads;
}

std::optional<MonotonicClock::TimePoint> PsService::last_chief_contact() const {
  const auto ticks = last_chief_contact_.load();
  if (ticks == kNever) return std::nullopt;
  return MonotonicClock::TimePoint(MonotonicClock::Duration(ticks));
}

bool PsService::SentByChief(const ReceivedMessage& request, std::string_view peer_address) const {
  if (request.header().sender_role() != wire::Role::Chief) return false;
  if (!options_.chief_addresses) return true;
  // The role is only what the sender claims; the address is where its
  // connection comes from, which a peer on another host cannot choose.
  const std::vector<std::string>& chief = *options_.chief_addresses;
  return !peer_address.empty() &&
         std::find(chief.begin(), chief.end(), peer_address) != chief.end();
}

Status PsService::RefuseAdmin(const ReceivedMessage& request, std::string_view peer_address) const {
  const char* type = wire::EnumNameMessageType(request.type());
  LOG(WARNING) << "refused a " << type << " from '" << peer_address << "' (role "
               << wire::EnumNameRole(request.header().sender_role()) << "): not the chief";
  // Names the request only: a prober learns nothing about the cluster.
  return PermissionDenied(std::string(type) + " is served to the chief only");
}

OutgoingMessage PsService::HandleInit(const ReceivedMessage& request) {
  auto config = ConfigFromWire(request.header().init());
  if (!config.ok()) return ReplyTo(request, config.status());
  auto tables = TablesFromWire(request.header().init(), ShardOf(request), options_.num_shards,
                               options_.embedding_storage_dir);
  if (!tables.ok()) return ReplyTo(request, tables.status());
  std::vector<std::pair<std::string, Tensor>> values;
  for (const TensorView& v : request.tensors()) {
    values.emplace_back(std::string(v.name), v.ToTensor());
  }
  if (const wire::ReplicaRoute* route = request.header().replica()) {
    const uint64_t cluster_id = request.header().cluster_id();
    Status status =
        replicas_.Initialize(route->shard(), *config, std::move(values), *tables, cluster_id);
    if (status.ok() && server_->cluster_id() == 0) server_->set_cluster_id(cluster_id);
    return ReplyTo(request, status);
  }
  if (const flatbuffers::String* name = request.header().container(); name && name->size() > 0) {
    return InitNamed(request, name->str(), *config, std::move(values), *tables);
  }
  if (const std::string names = NamedContainers(); !names.empty()) {
    return ReplyTo(request, FailedPrecondition("this ps serves named containers (" + names +
                                               "): give this job a --container too"));
  }
  const size_t count = values.size();
  Status status = default_.store.Initialize(*config, std::move(values), *tables);
  if (status.ok()) {
    if (server_->cluster_id() == 0) server_->set_cluster_id(request.header().cluster_id());
    LOG(INFO) << "initialized " << count << " variables and " << tables->size()
              << " embedding tables (optimizer " << config->optimizer.name << ", cluster "
              << request.header().cluster_id() << ")";
    for (const EmbeddingTableConfig& t : *tables) LOG(INFO) << DescribeTable(t);
  }
  return ReplyTo(request, status);
}

OutgoingMessage PsService::InitNamed(const ReceivedMessage& request, const std::string& name,
                                     const ShardConfig& config,
                                     std::vector<std::pair<std::string, Tensor>> values,
                                     const std::vector<EmbeddingTableConfig>& tables) {
  const wire::Header& h = request.header();
  if (Status valid = CheckContainerName(name, "container"); !valid.ok()) {
    return ReplyTo(request, valid);
  }
  const std::string where = "container '" + name + "'";
  const bool reset = h.init()->reset_container();
  std::shared_ptr<Container> held = FindNamed(name);
  if (held != nullptr && held->cluster_id != h.cluster_id() && !reset) {
    std::map<std::string, Shape> wanted;
    for (const auto& [variable, value] : values) wanted.emplace(variable, value.shape());
    const std::string difference = ModelDifference(held->store.Shapes(), wanted);
    return ReplyTo(request, PermissionDenied(
                                where + " holds another job's variables" +
                                (difference.empty() ? "" : " (another model: " + difference + ")") +
                                ": give this job another --container, or discard them with "
                                "chief --reset_container"));
  }
  auto fresh = std::make_shared<Container>(name);
  const size_t count = values.size();
  if (Status s = fresh->store.Initialize(config, std::move(values), tables); !s.ok()) {
    return ReplyTo(request, s);
  }
  fresh->cluster_id = h.cluster_id();
  const int chief_port = h.init()->chief_port();
  if (options_.container_chief && chief_port > 0) {
    fresh->chief = options_.container_chief(chief_port, h.cluster_id());
  }
  {
    MutexLock lock(named_mu_);
    named_[name].swap(fresh);  // the one replaced, if any, goes once its last request ends
  }
  LOG(INFO) << (reset && held ? "reset " : "initialized ") << where << ": " << count
            << " variables (optimizer " << config.optimizer.name << ", cluster " << h.cluster_id()
            << ")";
  return ReplyTo(request);
}

OutgoingMessage PsService::HandleShutdown(const ReceivedMessage& request) {
  const flatbuffers::String* name = request.header().container();
  if (name == nullptr || name->size() == 0) {
    LOG(INFO) << "shutdown requested by the chief";
    StopReplicas();
    server_->Stop();
    return ReplyTo(request);
  }
  // A named container's job is over: its share goes, the ps serves on.
  StatusOr<std::shared_ptr<Container>> c = Find(request);
  if (!c.ok()) return ReplyTo(request, c.status());
  {
    MutexLock lock(named_mu_);
    named_.erase(name->str());
  }
  LOG(INFO) << "released container '" << name->str() << "' (" << (*c)->store.Stats().variables
            << " variables): its job is over";
  return ReplyTo(request);
}

namespace {

Status CheckPullDType(wire::DataType pull_dtype) {
  if (pull_dtype == wire::DataType::Float32 || pull_dtype == wire::DataType::BFloat16) {
    return Status::OK();
  }
  return InvalidArgument("a pull cannot ask for dtype " +
                         std::to_string(static_cast<int>(pull_dtype)));
}

}  // namespace

Status PsService::AddPulledValues(Container& c, const std::vector<std::string>& names,
                                  wire::DataType pull_dtype, OutgoingMessage* reply) {
  std::vector<VariableValue> values;
  PST_RETURN_IF_ERROR(c.store.Pull(names, &values));
  ++c.pulls;
  reply->tensors.reserve(reply->tensors.size() + values.size());
  for (VariableValue& v : values) {
    // Narrowed outside every lock: a pulled value is a copy-on-write share
    // that no apply writes into.
    if (pull_dtype == wire::DataType::BFloat16 && v.tensor.dtype() == DType::kFloat32) {
      v.tensor = ToBFloat16(v.tensor);
    }
    reply->tensors.push_back({std::move(v.name), v.version, std::move(v.tensor)});
  }
  return Status::OK();
}

OutgoingMessage PsService::HandlePull(const ReceivedMessage& request) {
  OutgoingMessage reply = ReplyTo(request);
  const wire::DataType pull_dtype = request.header().pull_dtype();
  if (reply.status = CheckPullDType(pull_dtype); !reply.status.ok()) return reply;
  std::vector<std::string> names;
  if (const auto* wanted = request.header().names()) {
    for (const auto* n : *wanted) names.push_back(n->str());
  }
  StatusOr<std::shared_ptr<Container>> c = Find(request);
  if (!c.ok()) {
    reply.status = c.status();
    return reply;
  }
  StatusOr<std::vector<RowRequest>> row_requests = RowRequestsOf(request);
  if (!row_requests.ok()) {
    reply.status = row_requests.status();
    return reply;
  }
  std::vector<PulledRows> rows;
  reply.status = AddPulledValues(**c, names, pull_dtype, &reply);
  if (reply.status.ok() && !row_requests->empty()) {
    // The chief only evaluates: its pulls create, evict and count no row.
    const bool peek = request.header().sender_role() == wire::Role::Chief;
    reply.status = (*c)->store.PullRows(*row_requests, &rows, peek);
  }
  if (!reply.status.ok()) {
    reply.tensors.clear();
    return reply;
  }
  for (PulledRows& r : rows) {
    Tensor values = pull_dtype == wire::DataType::BFloat16 ? ToBFloat16(r.rows) : r.rows;
    reply.tensors.push_back({r.table, 0, std::move(values)});
    reply.tensors.push_back(
        {std::move(r.table), 0, std::move(r.versions), wire::TensorRole::RowVersions});
  }
  return reply;
}

OutgoingMessage PsService::HandlePush(const ReceivedMessage& request, RequestContext* context) {
  const wire::Header& h = request.header();
  StatusOr<std::shared_ptr<Container>> found = Find(request);
  if (!found.ok()) return ReplyTo(request, found.status());
  Container& c = **found;
  std::vector<Gradient> gradients;
  std::vector<SparseGradient> sparse;
  if (Status parsed = GradientsOf(request, &gradients, &sparse); !parsed.ok()) {
    return ReplyTo(request, parsed);
  }
  // Checked before the push applies: a refusal must mean nothing applied.
  const bool pull_back = h.push() != nullptr && h.push()->pull_back();
  if (pull_back) {
    if (Status dtype = CheckPullDType(h.pull_dtype()); !dtype.ok()) return ReplyTo(request, dtype);
  }
  StatusOr<PushOutcome> outcome = [&]() -> StatusOr<PushOutcome> {
    const wire::PushParams* p = h.push();
    if (c.store.mode() == TrainingMode::kSync) {
      if (p != nullptr && p->stream() != nullptr) {
        return InvalidArgument("a stream push (--follow) to a shard of a --mode=sync run");
      }
      const int replicas = h.push() != nullptr ? h.push()->replicas_to_aggregate() : 0;
      return c.store.SyncPush(gradients, h.sender_index(), h.step(), replicas, sparse);
    }
    const bool increment = p != nullptr && p->increment_global_step();
    const PushId id = p != nullptr
                          ? PushId{h.sender_index(), p->incarnation(), p->sequence(), p->part()}
                          : PushId{};
    return c.store.Push(gradients, increment, sparse, id, StreamBatchOf(p));
  }();
  if (!outcome.ok()) return ReplyTo(request, outcome.status());
  ++c.pushes;
  if (h.replica() != nullptr) return ReplyWhenReplicated(request, context, *outcome);
  if (outcome->completed_step >= 0) {
    if (&c == &default_ && notifier_ != nullptr) {
      notifier_->ShardApplied(outcome->completed_step, server_->cluster_id());
    } else if (c.chief != nullptr) {
      c.chief->ShardApplied(outcome->completed_step);
    }
  }
  OutgoingMessage reply = PushReply(request, *outcome);
  if (pull_back) {
    // Applied: what it pulls back is what a pull behind it would read.
    std::vector<std::string> names;
    for (const Gradient& g : gradients) names.emplace_back(g.name);
    if (Status pulled = AddPulledValues(c, names, h.pull_dtype(), &reply); !pulled.ok()) {
      return ReplyTo(request, pulled);
    }
  }
  return reply;
}

OutgoingMessage PsService::HandleExportCut(const ReceivedMessage& request) {
  StatusOr<std::shared_ptr<Container>> found = Find(request);
  if (!found.ok()) return ReplyTo(request, found.status());
  StatusOr<std::vector<CutRows>> cut = (*found)->store.CutChangedRows(request.step() != 0);
  if (!cut.ok()) return ReplyTo(request, cut.status());
  OutgoingMessage reply = ReplyTo(request, Status::OK());
  for (CutRows& rows : *cut) {
    reply.tensors.push_back({rows.table, 0, std::move(rows.ids), wire::TensorRole::RowIds});
    reply.tensors.push_back({rows.table, 0, std::move(rows.rows)});
    if (rows.removed.num_elements() > 0) {
      reply.tensors.push_back(
          {rows.table + "@removed", 0, std::move(rows.removed), wire::TensorRole::RowIds});
    }
  }
  return reply;
}

OutgoingMessage PsService::HandleTableRows(const ReceivedMessage& request) {
  StatusOr<std::shared_ptr<Container>> found = Find(request);
  if (!found.ok()) return ReplyTo(request, found.status());
  const std::vector<TensorView>& t = request.tensors();
  if (t.size() != 1 || t[0].role != wire::TensorRole::RowIds || t[0].dtype != DType::kInt64 ||
      t[0].num_elements() != 1) {
    return ReplyTo(request, InvalidArgument("a table rows request needs one cursor tensor"));
  }
  StatusOr<ListedRows> listed =
      (*found)->store.ListTableRows(t[0].name, t[0].i64()[0], request.step());
  if (!listed.ok()) return ReplyTo(request, listed.status());
  OutgoingMessage reply = ReplyTo(request, Status::OK());
  reply.step = listed->next;
  const std::string table(t[0].name);
  reply.tensors.push_back({table, 0, std::move(listed->ids), wire::TensorRole::RowIds});
  reply.tensors.push_back({table, 0, std::move(listed->rows)});
  return reply;
}

OutgoingMessage PsService::HandleStreams(const ReceivedMessage& request) {
  const wire::Header& h = request.header();
  StatusOr<std::shared_ptr<Container>> found = Find(request);
  if (!found.ok()) return ReplyTo(request, found.status());
  if (h.streams() == nullptr) return ReplyTo(request, InvalidArgument("no streams asked about"));
  std::vector<StreamProgress> progress;
  for (const wire::StreamProgress* asked : *h.streams()) {
    progress.push_back((*found)->store.StreamProgressOf(asked->stream()));
  }
  OutgoingMessage reply = ReplyTo(request, Status::OK());
  reply.extras = [progress = std::move(progress)](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<flatbuffers::Offset<wire::StreamProgress>> out;
    for (const StreamProgress& p : progress) {
      out.push_back(wire::CreateStreamProgress(fbb, p.stream, p.next_batch, p.batch_size,
                                               p.examples, p.complete));
    }
    HeaderExtras extras;
    extras.streams = fbb.CreateVector(out);
    return extras;
  };
  return reply;
}

OutgoingMessage PsService::ReplyWhenReplicated(const ReceivedMessage& request,
                                               RequestContext* context,
                                               const PushOutcome& outcome) {
  StatusOr<std::shared_ptr<Replica>> replica = FindReplica(request);
  if (!replica.ok()) return ReplyTo(request, replica.status());
  if (outcome.stale) return PushReply(request, outcome);  // nothing of it to hold
  // Async: the pushes applied so far, this one among them. Sync: the step
  // the push was for, applied (replication after aggregation).
  const Watermark needed = (*replica)->container.store.mode() == TrainingMode::kSync
                               ? Watermark{0, request.header().step() + 1}
                               : Watermark{outcome.pushes_applied, 0};
  OutgoingMessage reply = PushReply(request, outcome);
  // Sync: the step counts as applied on this shard once the backups hold it.
  std::function<void()> notify_chief;
  if (outcome.completed_step >= 0 && notifier_ != nullptr) {
    notify_chief = [notifier = notifier_, step = outcome.completed_step,
                    cluster_id = server_->cluster_id(),
                    shard = (*replica)->shard] { notifier->ShardApplied(step, cluster_id, shard); };
  }
  if (context == nullptr) {
    std::promise<Status> held;
    (*replica)->replicator->AfterReplicated(needed, [&held](Status s) { held.set_value(s); });
    if (Status s = held.get_future().get(); !s.ok()) return ReplyTo(request, s);
    if (notify_chief) notify_chief();
    return reply;
  }
  const wire::MessageType reply_type = reply.type;
  (*replica)->replicator->AfterReplicated(
      needed, [server = server_, to = context->Defer(), reply = std::move(reply), reply_type,
               notify_chief](const Status& s) mutable {
        if (s.ok() && notify_chief) notify_chief();
        if (s.ok()) return server->SendDeferred(std::move(to), reply);
        OutgoingMessage refusal;
        refusal.type = reply_type;
        refusal.status = s;
        server->SendDeferred(std::move(to), refusal);
      });
  return OutgoingMessage();  // ignored: deferred
}

OutgoingMessage PsService::HandleChain(const ReceivedMessage& request) {
  StatusOr<std::vector<ShardChain>> chains = ChainsFromWire(request.header(), options_.num_shards);
  if (!chains.ok()) return ReplyTo(request, chains.status());
  if (chains->size() != 1) {
    return ReplyTo(request, InvalidArgument("a chain request carries one chain"));
  }
  return ReplyTo(request, replicas_.Adopt(chains->front()));
}

OutgoingMessage PsService::HandleShip(const ReceivedMessage& request) {
  const wire::ReplicaRoute* route = request.header().replica();
  if (route == nullptr) return ReplyTo(request, InvalidArgument("a shipment names no shard"));
  // Views of the received frames, not copies: Restore copies what it keeps.
  NamedTensors state;
  state.reserve(request.tensors().size());
  for (const TensorView& t : request.tensors()) {
    std::shared_ptr<uint8_t[]> bytes(static_cast<uint8_t*>(const_cast<void*>(t.data)),
                                     [](uint8_t*) {});
    state.emplace_back(std::string(t.name), Tensor::Wrap(t.dtype, t.shape, std::move(bytes)));
  }
  return ReplyTo(request, replicas_.TakeShipment(request.header().sender_index(), route->shard(),
                                                 route->epoch(), state));
}

OutgoingMessage PsService::PushReply(const ReceivedMessage& request, const PushOutcome& o) {
  OutgoingMessage reply = ReplyTo(request);
  reply.extras = [o](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.push_result =
        wire::CreatePushResult(fbb, o.applied, o.dropped, o.scaled, o.max_staleness, o.global_step,
                               o.stale, o.duplicate, o.shard_step);
    return extras;
  };
  return reply;
}

StatusOr<std::string> PsService::PartPath(const ReceivedMessage& request) const {
  if (options_.checkpoint_dir.empty()) {
    return FailedPrecondition("this ps has no --checkpoint_dir");
  }
  const wire::CheckpointParams* c = request.header().checkpoint();
  const std::string name = c && c->name() ? c->name()->str() : "";
  // A folder name, never a path: a peer cannot make the ps write elsewhere.
  const bool valid = !name.empty() && name != "." && name != ".." &&
                     name.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyz"
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == std::string::npos;
  if (!valid) return InvalidArgument("bad checkpoint name '" + name + "'");
  // A named container's parts sit in a folder of its (checked) name.
  const flatbuffers::String* container = request.header().container();
  const std::string folder = container != nullptr && container->size() > 0
                                 ? options_.checkpoint_dir + "/" + container->str()
                                 : options_.checkpoint_dir;
  return folder + "/" + name + "/ps-" + std::to_string(ShardOf(request)) + ".part";
}

OutgoingMessage PsService::HandleSave(const ReceivedMessage& request) {
  auto path = PartPath(request);
  if (!path.ok()) return ReplyTo(request, path.status());
  StatusOr<std::shared_ptr<Container>> c = Find(request);
  if (!c.ok()) return ReplyTo(request, c.status());
  auto snapshot = (*c)->store.Snapshot(*path);
  if (!snapshot.ok()) return ReplyTo(request, snapshot.status());
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(*path).parent_path(), error);
  if (error) {
    return ReplyTo(request,
                   Unavailable("cannot create the folder of " + *path + ": " + error.message()));
  }
  auto digest = WriteTensorFile(*path, *snapshot);
  if (!digest.ok()) return ReplyTo(request, digest.status());
  LOG(INFO) << "saved " << *path << " (" << digest->bytes << " bytes)";
  OutgoingMessage reply = ReplyTo(request);
  const FileDigest d = *digest;
  reply.extras = [d](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.checkpoint = wire::CreateCheckpointParams(fbb, 0, d.bytes, d.crc32);
    return extras;
  };
  return reply;
}

OutgoingMessage PsService::HandleRestore(const ReceivedMessage& request) {
  auto path = PartPath(request);
  if (!path.ok()) return ReplyTo(request, path.status());
  StatusOr<std::shared_ptr<Container>> c = Find(request);
  if (!c.ok()) return ReplyTo(request, c.status());
  auto part = ReadTensorFile(*path);
  Status status = part.ok() ? (*c)->store.Restore(*part, *path) : part.status();
  if (status.ok() && request.header().replica() != nullptr) {
    // The backups hold the state from before the restore: ship it now.
    if (StatusOr<std::shared_ptr<Replica>> r = FindReplica(request); r.ok()) {
      (*r)->replicator->ShipSoon();
    }
  }
  if (!status.ok()) {
    status = Status(status.code(), *path + ": " + status.message());
  } else {
    // Here, not in the store's Restore: a backup restores every shipment.
    LOG(INFO) << "restored " << *path;
    for (const TableLoad& table : (*c)->store.TableStats()) {
      LOG(INFO) << "table '" << table.name << "' holds " << table.stats.rows_held
                << " rows after the restore";
    }
  }
  return ReplyTo(request, status);
}

// header.step carries k, an int64 on the wire: one beyond int's range is
// refused like a negative one, never cast.
OutgoingMessage PsService::HandleLrLowerings(const ReceivedMessage& request) {
  StatusOr<std::shared_ptr<Container>> c = Find(request);
  if (!c.ok()) return ReplyTo(request, c.status());
  const int64_t k = request.header().step();
  if (k < 0 || k > std::numeric_limits<int>::max()) {
    return ReplyTo(request, InvalidArgument("the learning rate's lowerings must be in 0.." +
                                            std::to_string(std::numeric_limits<int>::max()) +
                                            ", got " + std::to_string(k)));
  }
  const Status status = (*c)->store.SetLrLowerings(static_cast<int>(k));
  if (status.ok()) {
    LOG(INFO) << "plateau schedule: the learning rate is lowered " << k << " times from now on";
  }
  return ReplyTo(request, status);
}

OutgoingMessage PsService::HandleStatus(const ReceivedMessage& request) {
  OutgoingMessage reply = ReplyTo(request);
  // A named container not there (yet, or any more), or another job's, is
  // not this job's to use: one to initialize (which says why it cannot).
  StatusOr<std::shared_ptr<Container>> c = Find(request);
  const StoreStats s = c.ok() ? (*c)->store.Stats() : StoreStats();
  const uint64_t in = server_->bytes_in(), out = server_->bytes_out();
  const uint32_t queued = static_cast<uint32_t>(server_->queue_depth());
  std::vector<ContainerLoad> loads = Loads();
  std::vector<TableLoad> tables = c.ok() ? (*c)->store.TableStats() : std::vector<TableLoad>();
  std::vector<ReplicaLoad> replicas = replicas_.Loads();
  reply.extras = [s, in, out, queued, loads, tables,
                  replicas](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<flatbuffers::Offset<wire::ReplicaState>> replica_states;
    for (const ReplicaLoad& r : replicas) {
      replica_states.push_back(wire::CreateReplicaState(
          fbb, r.shard, r.epoch, r.primary, r.deposed, r.rounds, r.bytes_shipped, r.shipments_taken,
          r.filled_at_epoch, fbb.CreateVector(r.backups)));
    }
    std::vector<flatbuffers::Offset<wire::ContainerLoad>> containers;
    for (const ContainerLoad& l : loads) {
      containers.push_back(wire::CreateContainerLoad(fbb, fbb.CreateString(l.name), l.variables,
                                                     l.bytes_held, l.updates_applied, l.pulls,
                                                     l.pushes));
    }
    std::vector<flatbuffers::Offset<wire::TableLoad>> table_loads;
    for (const TableLoad& t : tables) {
      const EmbeddingTableStats& ts = t.stats;
      table_loads.push_back(wire::CreateTableLoad(fbb, fbb.CreateString(t.name), ts.rows_held,
                                                  ts.rows_created, ts.rows_evicted, ts.keys_refused,
                                                  ts.rows_dropped, ts.rows_applied, ts.bytes));
    }
    HeaderExtras extras;
    extras.shard_stats = wire::CreateShardStats(
        fbb, s.variables, s.bytes, s.updates_applied, s.gradients_dropped, s.gradients_scaled, in,
        out, s.staleness_sum, s.staleness_max, s.staleness_count, s.global_step, s.initialized,
        s.sync_step, s.stale_pushes, s.duplicate_pushes, fbb.CreateVector(s.aggregated_per_worker),
        queued, fbb.CreateVector(containers),
        table_loads.empty()
            ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::TableLoad>>>()
            : fbb.CreateVector(table_loads),
        s.lr_lowerings,
        replica_states.empty()
            ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::ReplicaState>>>()
            : fbb.CreateVector(replica_states));
    return extras;
  };
  return reply;
}

}  // namespace pst
