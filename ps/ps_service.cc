#include "ps/ps_service.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/bfloat16.h"

namespace pst {
namespace {

OutgoingMessage Reply(wire::MessageType type, Status status = Status::OK()) {
  OutgoingMessage reply;
  reply.type = type;
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
  return config;
}

// The reply type of a request that changes or stops the shard as a whole,
// which only the chief may send; Invalid for every other request.
wire::MessageType AdminReplyType(wire::MessageType request) {
  switch (request) {
    case wire::MessageType::InitRequest: return wire::MessageType::InitReply;
    case wire::MessageType::SaveRequest: return wire::MessageType::SaveReply;
    case wire::MessageType::RestoreRequest: return wire::MessageType::RestoreReply;
    case wire::MessageType::ShutdownRequest: return wire::MessageType::ShutdownReply;
    default: return wire::MessageType::Invalid;
  }
}

Tensor ToBFloat16(const Tensor& values) {
  Tensor narrow = Tensor::Uninitialized(DType::kBFloat16, values.shape());
  FloatToBFloat16(values.f32(), narrow.bf16(), values.num_elements());
  return narrow;
}

// A push's tensors as the store takes them: views of the received bytes.
std::vector<Gradient> Gradients(const ReceivedMessage& request) {
  std::vector<Gradient> gradients;
  gradients.reserve(request.tensors().size());
  for (const TensorView& t : request.tensors()) {
    gradients.push_back({t.name, t.dtype, t.shape, t.version, t.data});
  }
  return gradients;
}

}  // namespace

OutgoingMessage PsService::Handle(const ReceivedMessage& request, std::string_view peer_address) {
  const bool from_chief = SentByChief(request, peer_address);
  if (from_chief) {
    last_chief_contact_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  const wire::MessageType admin_reply = AdminReplyType(request.type());
  if (admin_reply != wire::MessageType::Invalid && options_.chief_addresses && !from_chief) {
    return Reply(admin_reply, RefuseAdmin(request, peer_address));
  }
  switch (request.type()) {
    case wire::MessageType::InitRequest: return HandleInit(request);
    case wire::MessageType::PullRequest: return HandlePull(request);
    case wire::MessageType::PushRequest: return HandlePush(request);
    case wire::MessageType::ShardStatusRequest: return HandleStatus();
    case wire::MessageType::SaveRequest: return HandleSave(request);
    case wire::MessageType::RestoreRequest: return HandleRestore(request);
    case wire::MessageType::ShutdownRequest:
      LOG(INFO) << "shutdown requested by the chief";
      server_->Stop();
      return Reply(wire::MessageType::ShutdownReply);
    default:
      return Reply(wire::MessageType::ErrorReply,
                   InvalidArgument(std::string("a ps does not serve ") +
                                   wire::EnumNameMessageType(request.type())));
  }
}

bool PsService::Quick(const ReceivedMessage& request) const {
  switch (request.type()) {
    case wire::MessageType::PullRequest:
    case wire::MessageType::ShardStatusRequest: return true;
    case wire::MessageType::PushRequest:
      return store_.mode() == TrainingMode::kAsync && request.total_bytes() <= kQuickPushBytes;
    default: return false;
  }
}

std::optional<std::chrono::steady_clock::time_point> PsService::last_chief_contact() const {
  const auto ticks = last_chief_contact_.load();
  if (ticks == 0) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ticks));
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
  if (!config.ok()) return Reply(wire::MessageType::InitReply, config.status());
  std::vector<std::pair<std::string, Tensor>> values;
  for (const TensorView& v : request.tensors()) {
    values.emplace_back(std::string(v.name), v.ToTensor());
  }
  const size_t count = values.size();
  Status status = store_.Initialize(*config, std::move(values));
  if (status.ok()) {
    if (server_->cluster_id() == 0) server_->set_cluster_id(request.header().cluster_id());
    LOG(INFO) << "initialized " << count << " variables (optimizer " << config->optimizer.name
              << ", cluster " << request.header().cluster_id() << ")";
  }
  return Reply(wire::MessageType::InitReply, status);
}

OutgoingMessage PsService::HandlePull(const ReceivedMessage& request) {
  OutgoingMessage reply = Reply(wire::MessageType::PullReply);
  const wire::DataType pull_dtype = request.header().pull_dtype();
  if (pull_dtype != wire::DataType::Float32 && pull_dtype != wire::DataType::BFloat16) {
    reply.status = InvalidArgument("a pull cannot ask for dtype " +
                                   std::to_string(static_cast<int>(pull_dtype)));
    return reply;
  }
  std::vector<std::string> names;
  if (const auto* wanted = request.header().names()) {
    for (const auto* n : *wanted) names.push_back(n->str());
  }
  std::vector<VariableValue> values;
  reply.status = store_.Pull(names, &values);
  if (!reply.status.ok()) return reply;
  reply.tensors.reserve(values.size());
  for (VariableValue& v : values) {
    // Narrowed outside every lock: a pulled value is a copy-on-write share
    // that no apply writes into.
    if (pull_dtype == wire::DataType::BFloat16 && v.tensor.dtype() == DType::kFloat32) {
      v.tensor = ToBFloat16(v.tensor);
    }
    reply.tensors.push_back({std::move(v.name), v.version, std::move(v.tensor)});
  }
  return reply;
}

OutgoingMessage PsService::HandlePush(const ReceivedMessage& request) {
  const wire::Header& h = request.header();
  const std::vector<Gradient> gradients = Gradients(request);
  StatusOr<PushOutcome> outcome = [&]() -> StatusOr<PushOutcome> {
    if (store_.mode() == TrainingMode::kSync) {
      const int replicas = h.push() != nullptr ? h.push()->replicas_to_aggregate() : 0;
      return store_.SyncPush(gradients, h.sender_index(), h.step(), replicas);
    }
    const bool increment = h.push() != nullptr && h.push()->increment_global_step();
    return store_.Push(gradients, increment);
  }();
  if (!outcome.ok()) return Reply(wire::MessageType::PushReply, outcome.status());
  if (outcome->completed_step >= 0 && notifier_ != nullptr) {
    notifier_->ShardApplied(outcome->completed_step, server_->cluster_id());
  }
  return PushReply(*outcome);
}

OutgoingMessage PsService::PushReply(const PushOutcome& o) {
  OutgoingMessage reply = Reply(wire::MessageType::PushReply);
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
  return options_.checkpoint_dir + "/" + name + "/ps-" + std::to_string(options_.shard) + ".part";
}

OutgoingMessage PsService::HandleSave(const ReceivedMessage& request) {
  auto path = PartPath(request);
  if (!path.ok()) return Reply(wire::MessageType::SaveReply, path.status());
  auto snapshot = store_.Snapshot();
  if (!snapshot.ok()) return Reply(wire::MessageType::SaveReply, snapshot.status());
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(*path).parent_path(), error);
  if (error) {
    return Reply(wire::MessageType::SaveReply,
                 Unavailable("cannot create the folder of " + *path + ": " + error.message()));
  }
  auto digest = WriteTensorFile(*path, *snapshot);
  if (!digest.ok()) return Reply(wire::MessageType::SaveReply, digest.status());
  LOG(INFO) << "saved " << *path << " (" << digest->bytes << " bytes)";
  OutgoingMessage reply = Reply(wire::MessageType::SaveReply);
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
  if (!path.ok()) return Reply(wire::MessageType::RestoreReply, path.status());
  auto part = ReadTensorFile(*path);
  Status status = part.ok() ? store_.Restore(*part) : part.status();
  if (!status.ok()) {
    status = Status(status.code(), *path + ": " + status.message());
  } else {
    LOG(INFO) << "restored " << *path;
  }
  return Reply(wire::MessageType::RestoreReply, status);
}

OutgoingMessage PsService::HandleStatus() {
  OutgoingMessage reply = Reply(wire::MessageType::ShardStatusReply);
  const StoreStats s = store_.Stats();
  const uint64_t in = server_->bytes_in(), out = server_->bytes_out();
  const uint32_t queued = static_cast<uint32_t>(server_->queue_depth());
  reply.extras = [s, in, out, queued](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.shard_stats = wire::CreateShardStats(
        fbb, s.variables, s.bytes, s.updates_applied, s.gradients_dropped, s.gradients_scaled, in,
        out, s.staleness_sum, s.staleness_max, s.staleness_count, s.global_step, s.initialized,
        s.sync_step, s.stale_pushes, s.duplicate_pushes, fbb.CreateVector(s.aggregated_per_worker),
        queued);
    return extras;
  };
  return reply;
}

}  // namespace pst
