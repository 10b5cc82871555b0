// VariableStore: the variables of one ps shard, their optimizer slots and
// versions, and asynchronous apply.
//
// Thread safety: every method may be called concurrently. Initialize() takes
// the store exclusively; Pull/Push take it shared and lock each variable they
// touch, so pushes to one variable are serialised (no lost updates) while
// different variables update in parallel.
//
// Sync mode (replicas_to_aggregate = N): a push carries the step of the
// worker's token (and the step's N when the chief picks N per step) and the
// gradients of every variable of the shard. The shard
// accumulates pushes for its current step s; a push for another step is
// dropped as stale (older: the step is over; newer: computed before a restore
// rolled the shard back), a second push of one worker for s as a duplicate. The Nth
// push applies the average of the N gradients through the optimizer and
// moves the shard to step s+1.
//
// Learning-rate schedule and weight decay (ShardConfig): each update runs
// at the scheduled rate of the global step before it, which a shard knows
// without asking: in sync mode the step being applied (the chief's global
// step, the same on every shard); in async mode the updates the variable
// has had, which is the global step when every push carries every variable
// (as workers push) and none is dropped as stale. Both are checkpointed, so
// a restored run goes on with its schedule. Embedding tables keep the base
// rate for now. A plateau schedule also reads k, the lowerings the chief
// decided (SetLrLowerings): every update after the call runs at lr * r^k.
// k is not in the checkpoint parts (the chief's manifest holds it, and the
// chief sends it again after every init and restore).
//
// Pulls are zero-copy: a pull shares the variable's buffer with the reply,
// and an apply that finds its buffer still shared (a reply still being sent)
// first moves the variable to a private copy (copy-on-write).
#ifndef PST_PS_VARIABLE_STORE_H_
#define PST_PS_VARIABLE_STORE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "common/tensor.h"
#include "common/tensor_file.h"
#include "ps/embedding_tables.h"
#include "ps/optimizers/optimizer.h"
#include "ps/replication/push_ledger.h"
#include "ps/replication/replicator.h"
#include "ps/shard_config.h"
#include "ps/streaming/stream_ledger.h"

namespace pst {

// Largest worker index a sync push may carry (bounds per-worker counters).
inline constexpr int kMaxWorkers = 1 << 14;

struct PushOutcome {
  uint32_t applied = 0;
  uint32_t dropped = 0;
  uint32_t scaled = 0;
  int64_t max_staleness = 0;
  int64_t global_step = -1;  // -1 when this shard does not hold it
  // Sync mode:
  bool stale = false;
  bool duplicate = false;
  int64_t shard_step = 0;       // the step the shard accumulates after this push
  int64_t completed_step = -1;  // the step this push completed, or -1
  // Async: the pushes applied by this shard, this one included (a
  // replicated shard acknowledges it once its backups hold that many).
  uint64_t pushes_applied = 0;
};

// A gradient handed to Push or SyncPush: `data` holds NumElements(shape)
// values of `dtype` (float32 or bfloat16) for the variable `name`, computed
// from its value at `version`. Borrowed: `name` and `data` belong to the
// caller and are read during the call only (the ps points them into the
// received request: no copy).
struct Gradient {
  std::string_view name;
  DType dtype = DType::kFloat32;
  Shape shape;
  int64_t version = 0;
  const void* data = nullptr;
  int64_t num_elements() const { return NumElements(shape); }
  const float* f32() const { return static_cast<const float*>(data); }
  const uint16_t* bf16() const { return static_cast<const uint16_t*>(data); }
};

// A variable's value as Pull returns it: shared with the store
// copy-on-write (a later apply copies first), with the version it has.
struct VariableValue {
  std::string name;
  int64_t version = 0;
  Tensor tensor;
};

class VariableStore {
 public:
  // Replaces all variables with `values` (name -> initial value) and all
  // embedding tables with `tables` (their rows start from a seeded function
  // of table and id: no values travel).
  Status Initialize(const ShardConfig& config, std::vector<std::pair<std::string, Tensor>> values,
                    const std::vector<EmbeddingTableConfig>& tables = {});
  bool initialized() const;
  TrainingMode mode() const;

  // Appends the named variables' current values and versions to *out.
  // NotFound names the first unknown variable; nothing is appended then.
  Status Pull(const std::vector<std::string>& names, std::vector<VariableValue>* out);
  // Appends the rows of each request (embedding tables) to *out; errors as
  // EmbeddingTables::Pull, nothing appended then. `peek`: an evaluation's
  // pull, which changes no table.
  Status PullRows(const std::vector<RowRequest>& requests, std::vector<PulledRows>* out,
                  bool peek = false);

  // Applies gradients (each tensor names its variable and carries the version
  // it was computed from). Every gradient is checked (known name, float32 or
  // bfloat16, the variable's shape, no NaN or infinity) before any is
  // applied; a bfloat16 gradient is widened to float32 for the apply. On error
  // nothing changes, and the error names the variable (a slice by its name).
  // Row gradients of embedding tables (`sparse`) are checked the same way
  // (EmbeddingTables::Check) and applied row by row, lazily.
  // A push with an `id` the shard holds already (PushLedger: a retry after
  // a failover), or of a `stream` batch it holds already (StreamLedger: a
  // file trained again after a restart), is reported as a duplicate and
  // changes nothing. A stream mark that does not fit is refused (Check).
  StatusOr<PushOutcome> Push(const std::vector<Gradient>& gradients, bool increment_global_step,
                             const std::vector<SparseGradient>& sparse = {}, const PushId& id = {},
                             const StreamBatch& stream = {});

  // The incremental export: EmbeddingTables::CutChangedRows.
  // FailedPrecondition before Initialize.
  StatusOr<std::vector<CutRows>> CutChangedRows(bool with_values);
  // A dynamic table's rows for a base or model file: EmbeddingTables::ListRows.
  StatusOr<ListedRows> ListTableRows(std::string_view table, int64_t cursor, int64_t max_rows);

  // --follow: how far this shard has applied `stream`.
  StreamProgress StreamProgressOf(uint64_t stream) const;

  // Sync mode: `worker` pushes the gradients of every trainable variable of
  // the shard for `step`, checked as Push checks them: a refused push is not
  // accumulated and is not the worker's push for the step. Stale and
  // duplicate pushes are reported in the outcome (not errors) and change
  // nothing. `replicas`: the gradients the step aggregates, as the worker's
  // token said (--replicas_to_aggregate=auto; 0: the config's N, which is
  // also the most a push may ask for); the step applies the mean of what it
  // holds once it holds that many.
  // A push's row gradients (`sparse`, any tables, none required) go to the
  // tables' accumulators: the step applies each row's sum divided by the
  // step's N (ps/sparse/sparse_accumulator.h states the rule).
  StatusOr<PushOutcome> SyncPush(const std::vector<Gradient>& gradients, int worker, int64_t step,
                                 int replicas = 0, const std::vector<SparseGradient>& sparse = {});

  // --lr_schedule=plateau: from now on updates run at the rate of k =
  // `lowerings` (Initialize sets 0). InvalidArgument for a negative k,
  // FailedPrecondition before Initialize or for another schedule.
  Status SetLrLowerings(int lowerings);

  StoreStats Stats() const;
  std::vector<TableLoad> TableStats() const;
  // The shape of every variable, by name (none before Initialize).
  std::map<std::string, Shape> Shapes() const;

  // Checkpoints. Snapshot() returns every variable with its optimizer
  // slots, version and update count, the sync step, and the stream ledger
  // when it holds any stream, as named tensors ("w", "w@version",
  // "w@updates", "w@slot/m", ..., "@sync_step", "@stream_ledger"), taken
  // with every update held off so that the ledger names exactly the
  // batches the values hold. Values are shared copy-on-write, not copied. Restore() loads such a
  // snapshot: every variable of the store must be in it with its shape (DataLoss naming the first
  // one missing or different); nothing changes on error.
  // part_path: where the part goes (comes from); a table on disk writes
  // (reads) its RocksDB checkpoint beside it (EmbeddingTables::Snapshot).
  StatusOr<NamedTensors> Snapshot(const std::string& part_path = "") const;
  Status Restore(const NamedTensors& snapshot, const std::string& part_path = "");

  // Replicated shards (ps/replication/replicator.h): Snapshot() and the
  // push ledger, taken with every update held off, so the state and its
  // watermark agree: each push the watermark counts is in it whole. A
  // backup takes it with Restore(), which also restores the ledger
  // (a checkpoint, which has none, clears it).
  StatusOr<ShardState> ReplicationSnapshot() const;
  // The watermark the next ReplicationSnapshot would have at least.
  Watermark ReplicationWatermark() const;

 private:
  struct Variable {
    explicit Variable(Tensor initial)
        : dtype(initial.dtype()), shape(initial.shape()), value(std::move(initial)) {}
    // Fixed at Initialize: read without `mu` (copy-on-write replaces
    // `value` whole, shape vector included, under `mu`).
    const DType dtype;
    const Shape shape;
    Mutex mu;
    Tensor value GUARDED_BY(mu);
    SlotSet slots GUARDED_BY(mu);
    int64_t version GUARDED_BY(mu) = 0;  // updates applied
    // Sync: sum of this step's gradients. Guarded by the store's sync_mu_,
    // which an attribute here cannot name (it is the outer object's member).
    std::vector<float> accumulator;
    std::vector<float> widened GUARDED_BY(mu);  // async: scratch for a bfloat16 gradient
    bool decays_weight = false;                 // fixed at Initialize: DecaysWeight
    bool moving_average = false;                // fixed at Initialize: a delta is added
  };

  // var -= update(grad) at the scheduled rate of global step `step` times
  // lr_scale (the staleness scale), weight decay first; a moving average's
  // var += grad (its delta). grad is float32 or bfloat16, of v's shape.
  void ApplyUpdate(Variable* v, const Gradient& grad, int64_t step, float lr_scale) const
      REQUIRES_SHARED(mu_) REQUIRES(v->mu);

  // Applies the average of the accumulated gradients and moves to the next
  // step.
  void ApplyAccumulated() REQUIRES_SHARED(mu_) REQUIRES(sync_mu_);

  Status CheckGradient(const Gradient& g, Variable** variable) const REQUIRES_SHARED(mu_);
  int64_t IncrementGlobalStep() REQUIRES_SHARED(mu_);

  // Push's dense part: applies each gradient to its target (checked) as the
  // staleness policy says, counting into *outcome. Returns the largest
  // version the targets had before, -1 for none.
  int64_t ApplyDense(const std::vector<Gradient>& gradients, const std::vector<Variable*>& targets,
                     PushOutcome* outcome) REQUIRES_SHARED(mu_);
  // Push's row gradients, at the scheduled rate of step `schedule_step`
  // (-1: the global step when this shard holds it, else 0), counting into
  // *outcome.
  void ApplySparse(const std::vector<SparseGradient>& sparse, int64_t schedule_step,
                   PushOutcome* outcome) REQUIRES_SHARED(mu_);
  // The global step's value (global_step_ must be set).
  int64_t GlobalStep() const REQUIRES_SHARED(mu_);

  // Every variable, slot and table into *out (Snapshot's tensors).
  Status SnapshotInto(NamedTensors* out, const std::string& part_path) const REQUIRES_SHARED(mu_);

  // A variable's tensors in a checkpoint part, which Restore finds and
  // checks for every variable before it loads any.
  struct VariableInPart {
    Variable* v;
    const Tensor* value;
    int64_t version, updates;
    std::vector<const Tensor*> slots;
  };
  // Finds variable `name` (*v)'s value, version, update count and slots in
  // `part`: DataLoss naming the first one missing, of another dtype or
  // shape, or impossible.
  StatusOr<VariableInPart> FindVariable(
      const std::map<std::string, const Tensor*, std::less<>>& part, const std::string& name,
      Variable* v) const REQUIRES(mu_);
  // Copies the tensors into their variable and clears its sync accumulator.
  void LoadVariable(const VariableInPart& in_part) REQUIRES(mu_);

  // exclusive for Initialize, Restore and ReplicationSnapshot, shared otherwise
  mutable SharedMutex mu_;
  ShardConfig config_ GUARDED_BY(mu_);
  std::unique_ptr<Optimizer> optimizer_ GUARDED_BY(mu_);
  std::optional<LrSchedule> schedule_ GUARDED_BY(mu_);  // set by Initialize
  int lr_lowerings_ GUARDED_BY(mu_) = 0;                // plateau's k: SetLrLowerings
  std::map<std::string, std::unique_ptr<Variable>, std::less<>> variables_ GUARDED_BY(mu_);
  Variable* global_step_ GUARDED_BY(mu_) = nullptr;
  bool initialized_ GUARDED_BY(mu_) = false;

  int trainable_variables_ GUARDED_BY(mu_) = 0;  // float32 variables
  // Replaced under mu_ held exclusively; the tables lock themselves, and
  // their sync accumulators are used under sync_mu_.
  EmbeddingTables tables_ GUARDED_BY(mu_);

  mutable Mutex sync_mu_;  // sync mode state; taken after mu_ (shared)
  int64_t sync_step_ GUARDED_BY(sync_mu_) = 0;
  std::vector<int> contributors_ GUARDED_BY(sync_mu_);     // workers of this step
  std::vector<uint64_t> aggregated_ GUARDED_BY(sync_mu_);  // per worker
  uint64_t stale_pushes_ GUARDED_BY(sync_mu_) = 0;
  uint64_t duplicate_pushes_ GUARDED_BY(sync_mu_) = 0;

  mutable Mutex ledger_mu_;  // taken after mu_ (shared)
  PushLedger ledger_ GUARDED_BY(ledger_mu_);
  StreamLedger streams_ GUARDED_BY(ledger_mu_);
  std::atomic<uint64_t> pushes_applied_{0};

  std::atomic<uint64_t> updates_applied_{0};
  std::atomic<uint64_t> gradients_dropped_{0};
  std::atomic<uint64_t> gradients_scaled_{0};
  std::atomic<uint64_t> staleness_sum_{0};
  std::atomic<uint64_t> staleness_count_{0};
  std::atomic<int64_t> staleness_max_{0};
};

}  // namespace pst

#endif  // PST_PS_VARIABLE_STORE_H_
