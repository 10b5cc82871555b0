#include "ps/variable_store.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

#include "common/bfloat16.h"
#include "common/non_finite.h"
#include "ps/optimizers/weight_decay.h"

namespace pst {

namespace {

float ElementAsFloat(const Gradient& g, int64_t i) {
  return g.dtype == DType::kBFloat16 ? BFloat16ToFloat(g.bf16()[i]) : g.f32()[i];
}

// The gradient as float32: the view's own bytes, or a bfloat16 gradient
// widened into *scratch.
const float* AsFloat32(const Gradient& g, std::vector<float>* scratch) {
  if (g.dtype == DType::kFloat32) return g.f32();
  scratch->resize(g.num_elements());
  BFloat16ToFloat(g.bf16(), scratch->data(), g.num_elements());
  return scratch->data();
}

// Copy-on-write: a value still shared with a reply being sent is copied
// before it is written. When ZeroMQ's I/O thread dropped the last other
// reference, the acquire fence orders that release before our writes.
void MakePrivate(Tensor* value) {
  if (value->buffer().use_count() > 1) {
    *value = value->Clone();
  } else {
    std::atomic_thread_fence(std::memory_order_acquire);
  }
}

}  // namespace

Status VariableStore::Initialize(const ShardConfig& config,
                                 std::vector<std::pair<std::string, Tensor>> values,
                                 const std::vector<EmbeddingTableConfig>& table_configs) {
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer, MakeOptimizer(config.optimizer));
  PST_ASSIGN_OR_RETURN(LrSchedule schedule, LrScheduleOf(config));
  PST_RETURN_IF_ERROR(CheckWeightDecay(config));
  if (std::any_of(table_configs.begin(), table_configs.end(),
                  [](const EmbeddingTableConfig& c) { return !c.storage_dir.empty(); })) {
    // A table on disk reopens its RocksDB folder, which the old table of
    // the same name holds locked: close the old tables first (a re-init
    // discards them anyway).
    WriterMutexLock lock(mu_);
    tables_ = EmbeddingTables();
  }
  EmbeddingTables tables;
  PST_RETURN_IF_ERROR(tables.Initialize(table_configs, *optimizer));
  if (config.mode == TrainingMode::kSync && config.replicas_to_aggregate < 1) {
    return InvalidArgument("replicas_to_aggregate must be >= 1");
  }
  int trainable = 0;
  std::map<std::string, std::unique_ptr<Variable>, std::less<>> variables;
  for (auto& [name, value] : values) {
    auto v = std::make_unique<Variable>(std::move(value));
    if (v->dtype == DType::kFloat32) {
      MutexLock vlock(v->mu);  // no other thread sees v yet: uncontended, for the analysis
      v->slots = optimizer->CreateSlots(NumElements(v->shape));
      v->moving_average = std::find(config.moving_averages.begin(), config.moving_averages.end(),
                                    name) != config.moving_averages.end();
      v->decays_weight = !v->moving_average && DecaysWeight({name, v->dtype, v->shape});
      if (config.mode == TrainingMode::kSync) v->accumulator.assign(NumElements(v->shape), 0.0f);
      ++trainable;
    }
    if (!variables.emplace(name, std::move(v)).second) {
      return InvalidArgument("variable '" + name + "' given twice");
    }
  }
  Variable* global_step = nullptr;
  if (!config.global_step_variable.empty()) {
    auto it = variables.find(config.global_step_variable);
    // dtype and shape are the value's, fixed at construction: no lock.
    if (it == variables.end() || it->second->dtype != DType::kInt64 ||
        NumElements(it->second->shape) != 1) {
      return InvalidArgument("global step variable '" + config.global_step_variable +
                             "' is not an int64 scalar of this shard");
    }
    global_step = it->second.get();
  }
  for (const std::string& name : config.moving_averages) {
    auto it = variables.find(name);
    if (it == variables.end() || it->second->dtype != DType::kFloat32) {
      return InvalidArgument("moving average '" + name +
                             "' is not a float32 variable of this shard");
    }
  }
  WriterMutexLock lock(mu_);
  config_ = config;
  optimizer_ = std::move(optimizer);
  schedule_ = schedule;
  // Fresh variables start at the base rate; the chief sends k again after
  // the restore that usually follows.
  lr_lowerings_ = 0;
  {
    MutexLock ledger_lock(ledger_mu_);
    ledger_ = PushLedger();  // fresh variables hold no push
    streams_ = StreamLedger();
  }
  variables_ = std::move(variables);
  global_step_ = global_step;
  trainable_variables_ = trainable;
  tables_ = std::move(tables);
  initialized_ = true;
  MutexLock sync_lock(sync_mu_);
  sync_step_ = 0;
  contributors_.clear();
  aggregated_.clear();
  stale_pushes_ = duplicate_pushes_ = 0;
  return Status::OK();
}

bool VariableStore::initialized() const {
  ReaderMutexLock lock(mu_);
  return initialized_;
}

TrainingMode VariableStore::mode() const {
  ReaderMutexLock lock(mu_);
  return config_.mode;
}

Status VariableStore::Pull(const std::vector<std::string>& names, std::vector<VariableValue>* out) {
  ReaderMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  std::vector<Variable*> found;
  for (const std::string& name : names) {
    auto it = variables_.find(name);
    if (it == variables_.end()) return NotFound("no variable '" + name + "' on this shard");
    found.push_back(it->second.get());
  }
  for (size_t i = 0; i < names.size(); ++i) {
    MutexLock vlock(found[i]->mu);
    out->push_back({names[i], found[i]->version, found[i]->value});
  }
  return Status::OK();
}

Status VariableStore::PullRows(const std::vector<RowRequest>& requests,
                               std::vector<PulledRows>* out, bool peek) {
  ReaderMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  return tables_.Pull(requests, peek, out);
}

Status VariableStore::CheckGradient(const Gradient& g, Variable** variable) const {
  auto it = variables_.find(g.name);
  // Quoted only in an error: this runs for every gradient of every push.
  const auto name = [&g] { return std::string(g.name); };
  if (it == variables_.end()) return NotFound("no variable '" + name() + "' on this shard");
  Variable* v = it->second.get();
  // The shape and dtype never change after Initialize: no variable lock needed.
  if (v->dtype != DType::kFloat32 || (g.dtype != DType::kFloat32 && g.dtype != DType::kBFloat16)) {
    return InvalidArgument("gradient for '" + name() +
                           "' must be float32 or bfloat16 for a float32 variable");
  }
  if (g.shape != v->shape) {
    return InvalidArgument("gradient for '" + name() + "' has shape " + ShapeToString(g.shape) +
                           ", variable has " + ShapeToString(v->shape));
  }
  if (g.version < 0 || g.version > std::numeric_limits<int64_t>::max() / 2) {
    return InvalidArgument("gradient for '" + name() + "' has bad version " +
                           std::to_string(g.version));
  }
  // One NaN or infinity would spread through the optimizer into every later
  // value of the variable (in sync mode, into the step's average). Checked
  // here, before any variable lock is taken, as one more read of the
  // gradient: a vectorised pass, cheaper than the apply that follows.
  const int64_t n = g.num_elements();
  const int64_t bad =
      g.dtype == DType::kBFloat16 ? FirstNonFinite(g.bf16(), n) : FirstNonFinite(g.f32(), n);
  if (bad < n) {
    return InvalidArgument("gradient for '" + name() + "' is not finite (" +
                           std::to_string(ElementAsFloat(g, bad)) + " at element " +
                           std::to_string(bad) + ")");
  }
  *variable = v;
  return Status::OK();
}

int64_t VariableStore::IncrementGlobalStep() {
  MutexLock lock(global_step_->mu);
  MakePrivate(&global_step_->value);
  ++global_step_->version;
  return ++global_step_->value.i64()[0];
}

StatusOr<PushOutcome> VariableStore::Push(const std::vector<Gradient>& gradients,
                                          bool increment_global_step,
                                          const std::vector<SparseGradient>& sparse,
                                          const PushId& id, const StreamBatch& stream) {
  ReaderMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  if (increment_global_step && global_step_ == nullptr) {
    return InvalidArgument("this shard does not hold the global step");
  }
  std::vector<Variable*> targets(gradients.size());
  for (size_t i = 0; i < gradients.size(); ++i) {
    PST_RETURN_IF_ERROR(CheckGradient(gradients[i], &targets[i]));
  }
  PST_RETURN_IF_ERROR(tables_.Check(sparse));
  PushOutcome outcome;
  if (id.valid() || stream.valid()) {  // replicated shards and --follow only
    // Recorded before the apply: a retry arriving meanwhile is a duplicate
    // too. A checked push cannot fail any more, so what the ledgers hold
    // is applied once the exclusive lock of a snapshot is taken.
    MutexLock ledger_lock(ledger_mu_);
    if (stream.valid()) PST_RETURN_IF_ERROR(streams_.Check(stream));
    outcome.duplicate =
        (id.valid() && ledger_.Holds(id)) || (stream.valid() && streams_.Holds(stream));
    if (id.valid()) ledger_.Record(id);
    if (stream.valid() && !outcome.duplicate) streams_.Record(stream);
  }
  if (outcome.duplicate) {
    if (global_step_ != nullptr) outcome.global_step = GlobalStep();
    outcome.pushes_applied = pushes_applied_.load();
    return outcome;
  }
  // The step the tables' rows follow the schedule at: the dense variables'
  // (each one's update count, the global step of an async run), or, when
  // this push has none here, the global step if this shard holds it.
  const int64_t schedule_step = ApplyDense(gradients, targets, &outcome);
  const bool dense_applied = outcome.applied > 0;
  if (!sparse.empty()) ApplySparse(sparse, schedule_step, &outcome);
  if (global_step_ != nullptr) outcome.global_step = GlobalStep();
  if (increment_global_step && (dense_applied || gradients.empty())) {
    outcome.global_step = IncrementGlobalStep();
  }
  outcome.pushes_applied = ++pushes_applied_;
  return outcome;
}

int64_t VariableStore::ApplyDense(const std::vector<Gradient>& gradients,
                                  const std::vector<Variable*>& targets, PushOutcome* outcome) {
  int64_t max_version = -1;
  for (size_t i = 0; i < gradients.size(); ++i) {
    Variable* v = targets[i];
    MutexLock vlock(v->mu);
    max_version = std::max(max_version, v->version);
    const int64_t staleness = std::max<int64_t>(0, v->version - gradients[i].version);
    outcome->max_staleness = std::max(outcome->max_staleness, staleness);
    staleness_sum_ += staleness;
    ++staleness_count_;
    int64_t seen = staleness_max_.load();
    while (staleness > seen && !staleness_max_.compare_exchange_weak(seen, staleness)) {
    }
    float lr_scale = 1.0f;
    if (config_.staleness_policy == StalenessPolicy::kDrop && staleness > config_.max_staleness) {
      ++outcome->dropped;
      ++gradients_dropped_;
      continue;
    }
    if (config_.staleness_policy == StalenessPolicy::kScale && staleness > 0) {
      lr_scale = 1.0f / (1.0f + staleness);
      ++outcome->scaled;
      ++gradients_scaled_;
    }
    ApplyUpdate(v, gradients[i], v->version, lr_scale);
    ++outcome->applied;
    ++updates_applied_;
  }
  return max_version;
}

void VariableStore::ApplySparse(const std::vector<SparseGradient>& sparse, int64_t schedule_step,
                                PushOutcome* outcome) {
  if (schedule_step < 0 && global_step_ != nullptr) schedule_step = GlobalStep();
  const SparseApplyCounts rows = tables_.Apply(
      sparse, config_, schedule_->Multiplier(std::max<int64_t>(schedule_step, 0), lr_lowerings_));
  outcome->applied += rows.applied;
  outcome->dropped += rows.dropped;
  outcome->scaled += rows.scaled;
  outcome->max_staleness = std::max(outcome->max_staleness, rows.max_staleness);
  updates_applied_ += rows.applied;
}

int64_t VariableStore::GlobalStep() const {
  MutexLock lock(global_step_->mu);
  return global_step_->value.i64()[0];
}

StatusOr<PushOutcome> VariableStore::SyncPush(const std::vector<Gradient>& gradients, int worker,
                                              int64_t step, int replicas,
                                              const std::vector<SparseGradient>& sparse) {
  ReaderMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  if (config_.mode != TrainingMode::kSync) {
    return FailedPrecondition("a sync push reached a shard in async mode");
  }
  if (worker < 0 || worker >= kMaxWorkers) {
    return InvalidArgument("bad worker index " + std::to_string(worker));
  }
  if (replicas < 0 || replicas > config_.replicas_to_aggregate) {
    return InvalidArgument("a sync push for a step of " + std::to_string(replicas) +
                           " gradients; this shard aggregates 1.." +
                           std::to_string(config_.replicas_to_aggregate));
  }
  const size_t needed = replicas > 0 ? replicas : config_.replicas_to_aggregate;
  std::vector<Variable*> targets(gradients.size());
  for (size_t i = 0; i < gradients.size(); ++i) {
    PST_RETURN_IF_ERROR(CheckGradient(gradients[i], &targets[i]));
  }
  std::vector<Variable*> sorted = targets;
  std::sort(sorted.begin(), sorted.end());
  if (static_cast<int>(gradients.size()) != trainable_variables_ ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return InvalidArgument("a sync push must carry one gradient for each of the shard's " +
                           std::to_string(trainable_variables_) + " variables, got " +
                           std::to_string(gradients.size()));
  }
  PST_RETURN_IF_ERROR(tables_.Check(sparse));
  MutexLock sync_lock(sync_mu_);
  PushOutcome outcome;
  if (step != sync_step_) {
    // Older: the step is over. Newer: computed before a restore rolled the
    // shard back to a checkpoint. Either way it belongs to no open step.
    outcome.stale = true;
    ++stale_pushes_;
  } else if (std::find(contributors_.begin(), contributors_.end(), worker) != contributors_.end()) {
    outcome.duplicate = true;
    ++duplicate_pushes_;
  } else {
    for (size_t i = 0; i < gradients.size(); ++i) {
      float* sum = targets[i]->accumulator.data();
      const int64_t n = targets[i]->accumulator.size();
      const Gradient& g = gradients[i];
      // bfloat16 is widened inside the sum: no float32 copy of the gradient.
      if (g.dtype == DType::kBFloat16) {
        const uint16_t* narrow = g.bf16();
        for (int64_t j = 0; j < n; ++j) sum[j] += BFloat16ToFloat(narrow[j]);
      } else {
        const float* wide = g.f32();
        for (int64_t j = 0; j < n; ++j) sum[j] += wide[j];
      }
    }
    tables_.Accumulate(sparse);
    contributors_.push_back(worker);
    if (contributors_.size() >= needed) {
      outcome.completed_step = sync_step_;
      outcome.applied = static_cast<uint32_t>(gradients.size());
      outcome.applied += tables_.ApplyAccumulated(static_cast<int>(contributors_.size()),
                                                  schedule_->Multiplier(sync_step_, lr_lowerings_));
      ApplyAccumulated();
    }
  }
  outcome.shard_step = sync_step_;
  return outcome;
}

void VariableStore::ApplyAccumulated() {
  const float scale = 1.0f / contributors_.size();
  for (auto& [name, v] : variables_) {
    if (v->dtype != DType::kFloat32) continue;
    MutexLock vlock(v->mu);
    for (float& x : v->accumulator) x *= scale;
    ApplyUpdate(v.get(), Gradient{name, DType::kFloat32, v->shape, 0, v->accumulator.data()},
                sync_step_, 1.0f);
    ++updates_applied_;
    std::fill(v->accumulator.begin(), v->accumulator.end(), 0.0f);
  }
  for (int w : contributors_) {
    if (static_cast<size_t>(w) >= aggregated_.size()) aggregated_.resize(w + 1, 0);
    ++aggregated_[w];
  }
  contributors_.clear();
  ++sync_step_;
}

void VariableStore::ApplyUpdate(Variable* v, const Gradient& grad, int64_t step,
                                float lr_scale) const {
  MakePrivate(&v->value);
  const int64_t n = v->value.num_elements();
  if (v->moving_average) {
    float* value = v->value.f32();
    const float* delta = AsFloat32(grad, &v->widened);
    for (int64_t i = 0; i < n; ++i) value[i] += delta[i];
    ++v->version;
    return;
  }
  const float scale = lr_scale * schedule_->Multiplier(step, lr_lowerings_);
  if (v->decays_weight && config_.weight_decay > 0) {
    ApplyWeightDecay(v->value.f32(), n, config_.optimizer.learning_rate * scale,
                     config_.weight_decay);
  }
  if (grad.dtype == DType::kBFloat16) {
    optimizer_->ApplyBFloat16(v->value.f32(), grad.bf16(), n, scale, &v->slots, &v->widened);
  } else {
    optimizer_->Apply(v->value.f32(), grad.f32(), n, scale, &v->slots);
  }
  ++v->version;
}

std::map<std::string, Shape> VariableStore::Shapes() const {
  ReaderMutexLock lock(mu_);
  std::map<std::string, Shape> shapes;
  for (const auto& [name, v] : variables_) shapes.emplace(name, v->shape);
  return shapes;
}

std::vector<TableLoad> VariableStore::TableStats() const {
  ReaderMutexLock lock(mu_);
  return tables_.Stats();
}

// Exclusive: no update is half-way between two rates.
Status VariableStore::SetLrLowerings(int lowerings) {
  if (lowerings < 0) {
    return InvalidArgument("the learning rate's lowerings must be >= 0, got " +
                           std::to_string(lowerings));
  }
  WriterMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  if (schedule_->kind() != LrDecay::kPlateau) {
    return FailedPrecondition(
        "the learning rate's lowerings are for --lr_schedule=plateau; "
        "this shard's schedule is " +
        config_.lr_schedule);
  }
  lr_lowerings_ = lowerings;
  return Status::OK();
}

StoreStats VariableStore::Stats() const {
  ReaderMutexLock lock(mu_);
  StoreStats s;
  s.initialized = initialized_;
  s.lr_lowerings = lr_lowerings_;
  s.variables = static_cast<uint32_t>(variables_.size() + tables_.size());
  s.bytes = tables_.bytes();
  for (const auto& [name, v] : variables_) {
    MutexLock vlock(v->mu);
    s.bytes += v->value.num_bytes();
  }
  if (global_step_ != nullptr) {
    MutexLock vlock(global_step_->mu);
    s.global_step = global_step_->value.i64()[0];
  }
  s.updates_applied = updates_applied_;
  s.gradients_dropped = gradients_dropped_;
  s.gradients_scaled = gradients_scaled_;
  s.staleness_sum = staleness_sum_;
  s.staleness_count = staleness_count_;
  s.staleness_max = staleness_max_;
  MutexLock sync_lock(sync_mu_);
  s.sync_step = sync_step_;
  s.stale_pushes = stale_pushes_;
  s.duplicate_pushes = duplicate_pushes_;
  s.aggregated_per_worker = aggregated_;
  return s;
}

}  // namespace pst

namespace pst {
namespace {

Tensor FloatsAs(const std::vector<float>& values, const Shape& shape) {
  Tensor t = Tensor::Uninitialized(DType::kFloat32, shape);
  std::copy(values.begin(), values.end(), t.f32());
  return t;
}

constexpr char kSyncStepName[] = "@sync_step";
constexpr char kPushLedgerName[] = "@push_ledger";
constexpr char kStreamLedgerName[] = "@stream_ledger";
constexpr char kLrLoweringsName[] = "@lr_lowerings";

// Versions, update counts and steps only count up from 0; anything else in a
// part (or near the int64 limit, where staleness arithmetic would overflow)
// is corruption.
bool PlausibleCount(int64_t n) { return n >= 0 && n <= std::numeric_limits<int64_t>::max() / 2; }

// A checkpoint part's (or a shipment's) tensors by name.
using TensorsByName = std::map<std::string, const Tensor*, std::less<>>;

// The tensor `name` of `part`, of `dtype` and `shape`: DataLoss when it is
// missing or is not.
StatusOr<const Tensor*> FindTensor(const TensorsByName& part, const std::string& name, DType dtype,
                                   const Shape& shape) {
  auto it = part.find(name);
  if (it == part.end()) return DataLoss("checkpoint part has no '" + name + "'");
  if (it->second->dtype() != dtype || it->second->shape() != shape) {
    return DataLoss("checkpoint part's '" + name + "' is " + DTypeName(it->second->dtype()) +
                    ShapeToString(it->second->shape()) + ", expected " + DTypeName(dtype) +
                    ShapeToString(shape));
  }
  return it->second;
}

// A shipment's push ledger; an empty one for a checkpoint, which has none
// (the pushes after it are not held).
StatusOr<PushLedger> LedgerIn(const TensorsByName& part) {
  if (auto it = part.find(kPushLedgerName); it != part.end()) {
    return PushLedger::FromTensor(*it->second);
  }
  return PushLedger();
}

// A part's stream ledger; an empty one for a part of a run without --follow.
StatusOr<StreamLedger> StreamLedgerIn(const TensorsByName& part) {
  if (auto it = part.find(kStreamLedgerName); it != part.end()) {
    return StreamLedger::FromTensor(*it->second);
  }
  return StreamLedger();
}

// A shipment's learning-rate lowerings; none for a checkpoint (its k is in
// its manifest).
StatusOr<std::optional<int>> LrLoweringsIn(const TensorsByName& part) {
  std::optional<int> lowerings;
  if (auto it = part.find(kLrLoweringsName); it != part.end()) {
    const Tensor& k = *it->second;
    if (k.dtype() != DType::kInt64 || !k.shape().empty() || k.i64()[0] < 0 ||
        k.i64()[0] > std::numeric_limits<int>::max()) {
      return DataLoss("a shipment's learning-rate lowerings are malformed");
    }
    lowerings = static_cast<int>(k.i64()[0]);
  }
  return lowerings;
}

}  // namespace

StatusOr<std::vector<CutRows>> VariableStore::CutChangedRows(bool with_values) {
  ReaderMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  std::vector<CutRows> out;
  PST_RETURN_IF_ERROR(tables_.CutChangedRows(with_values, &out));
  return out;
}

StatusOr<ListedRows> VariableStore::ListTableRows(std::string_view table, int64_t cursor,
                                                  int64_t max_rows) {
  ReaderMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  return tables_.ListRows(table, cursor, max_rows);
}

StreamProgress VariableStore::StreamProgressOf(uint64_t stream) const {
  MutexLock ledger_lock(ledger_mu_);
  return streams_.Progress(stream);
}

StatusOr<NamedTensors> VariableStore::Snapshot(const std::string& part_path) const {
  // Exclusive: a push applies under the shared lock, so none is half in the
  // snapshot while the stream ledger counts it.
  WriterMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  NamedTensors out;
  PST_RETURN_IF_ERROR(SnapshotInto(&out, part_path));
  return out;
}

StatusOr<ShardState> VariableStore::ReplicationSnapshot() const {
  WriterMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("variables are not initialized yet");
  ShardState state;
  PST_RETURN_IF_ERROR(SnapshotInto(&state.tensors, ""));
  // A plateau's k: a promoted backup goes on at the primary's rate.
  state.tensors.emplace_back(kLrLoweringsName, ScalarI64(lr_lowerings_));
  MutexLock ledger_lock(ledger_mu_);
  state.tensors.emplace_back(kPushLedgerName, ledger_.ToTensor());
  MutexLock sync_lock(sync_mu_);
  state.watermark = Watermark{pushes_applied_.load(), sync_step_};
  return state;
}

Watermark VariableStore::ReplicationWatermark() const {
  MutexLock sync_lock(sync_mu_);
  return Watermark{pushes_applied_.load(), sync_step_};
}

Status VariableStore::SnapshotInto(NamedTensors* snapshot, const std::string& part_path) const {
  NamedTensors& out = *snapshot;
  for (const auto& [name, v] : variables_) {
    MutexLock vlock(v->mu);
    out.emplace_back(name, v->value);  // shared: a later apply copies first
    out.emplace_back(name + "@version", ScalarI64(v->version));
    out.emplace_back(name + "@updates", ScalarI64(v->slots.updates));
    for (size_t i = 0; i < v->slots.names.size(); ++i) {
      out.emplace_back(name + "@slot/" + v->slots.names[i], FloatsAs(v->slots.values[i], v->shape));
    }
  }
  PST_RETURN_IF_ERROR(tables_.Snapshot(&out, part_path));
  {
    MutexLock ledger_lock(ledger_mu_);
    if (!streams_.empty()) out.emplace_back(kStreamLedgerName, streams_.ToTensor());
  }
  MutexLock sync_lock(sync_mu_);
  out.emplace_back(kSyncStepName, ScalarI64(sync_step_));
  return Status::OK();
}

Status VariableStore::Restore(const NamedTensors& snapshot, const std::string& part_path) {
  TensorsByName by_name;
  for (const auto& [name, t] : snapshot) by_name[name] = &t;
  WriterMutexLock lock(mu_);
  if (!initialized_) return FailedPrecondition("initialize before restoring");
  // Check everything first, so that a bad part changes nothing.
  std::vector<VariableInPart> found;
  for (const auto& [name, v] : variables_) {
    PST_ASSIGN_OR_RETURN(VariableInPart in_part, FindVariable(by_name, name, v.get()));
    found.push_back(std::move(in_part));
  }
  PST_ASSIGN_OR_RETURN(const Tensor* sync_step,
                       FindTensor(by_name, kSyncStepName, DType::kInt64, {}));
  if (!PlausibleCount(sync_step->i64()[0])) {
    return DataLoss("checkpoint part has an impossible sync step");
  }
  PST_ASSIGN_OR_RETURN(PushLedger ledger, LedgerIn(by_name));
  PST_ASSIGN_OR_RETURN(StreamLedger streams, StreamLedgerIn(by_name));
  PST_ASSIGN_OR_RETURN(const std::optional<int> lowerings, LrLoweringsIn(by_name));
  PST_RETURN_IF_ERROR(tables_.Restore(by_name, part_path));
  for (const VariableInPart& in_part : found) LoadVariable(in_part);
  if (lowerings) lr_lowerings_ = *lowerings;
  {
    MutexLock ledger_lock(ledger_mu_);
    ledger_ = std::move(ledger);
    streams_ = std::move(streams);
  }
  MutexLock sync_lock(sync_mu_);
  sync_step_ = sync_step->i64()[0];
  contributors_.clear();
  return Status::OK();
}

StatusOr<VariableStore::VariableInPart> VariableStore::FindVariable(const TensorsByName& part,
                                                                    const std::string& name,
                                                                    Variable* v) const {
  VariableInPart in_part{v, nullptr, 0, 0, {}};
  PST_ASSIGN_OR_RETURN(in_part.value, FindTensor(part, name, v->dtype, v->shape));
  PST_ASSIGN_OR_RETURN(const Tensor* version,
                       FindTensor(part, name + "@version", DType::kInt64, {}));
  in_part.version = version->i64()[0];
  PST_ASSIGN_OR_RETURN(const Tensor* updates,
                       FindTensor(part, name + "@updates", DType::kInt64, {}));
  in_part.updates = updates->i64()[0];
  if (!PlausibleCount(in_part.version) || !PlausibleCount(in_part.updates)) {
    return DataLoss("checkpoint part's '" + name + "' has an impossible version or update count");
  }
  MutexLock vlock(v->mu);  // uncontended under mu_ held exclusively
  for (const std::string& slot : v->slots.names) {
    PST_ASSIGN_OR_RETURN(const Tensor* t,
                         FindTensor(part, name + "@slot/" + slot, DType::kFloat32, v->shape));
    in_part.slots.push_back(t);
  }
  return in_part;
}

void VariableStore::LoadVariable(const VariableInPart& in_part) {
  Variable* v = in_part.v;
  MutexLock vlock(v->mu);
  // A backup restores every shipment: into its own buffer (no
  // allocation) unless a pull's reply still holds it.
  MakePrivate(&v->value);
  std::memcpy(v->value.data(), in_part.value->data(), in_part.value->num_bytes());
  v->version = in_part.version;
  v->slots.updates = in_part.updates;
  for (size_t i = 0; i < in_part.slots.size(); ++i) {
    const float* src = in_part.slots[i]->f32();
    std::copy(src, src + in_part.slots[i]->num_elements(), v->slots.values[i].begin());
  }
  std::fill(v->accumulator.begin(), v->accumulator.end(), 0.0f);
}

}  // namespace pst
