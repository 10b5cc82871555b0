// The pages the metrics endpoints serve: the chief's view of the training
// (TrainingSnapshot, kept up to date in a TrainingMetrics) and a ps's load
// (ShardLoad). Plain values in, Prometheus text out; names "pstrain_...".
#ifndef PST_MONITORING_TRAINING_METRICS_H_
#define PST_MONITORING_TRAINING_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/mutex.h"

namespace pst {

// What the chief knows of the run. Times are seconds.
struct TrainingSnapshot {
  int64_t global_step = 0;
  int64_t train_steps = 0;
  double steps_per_second = 0;     // since training opened
  double examples_per_second = 0;  // since training opened
  double train_loss = 0;           // mean of the newest window of reports
  double learning_rate = 0;        // the scheduled rate at global_step
  double test_accuracy = 0;        // of the newest evaluation
  double test_loss = 0;
  double test_auc = -1;       // click models: of the newest evaluation; -1: none
  double test_log_loss = -1;  // click models: of the newest evaluation; -1: none
  bool evaluated = false;     // false: test_* are not known yet and not exported
  int live_workers = 0;
  int live_ps = 0;
  int64_t task_deaths = 0;
  int64_t ps_promotions = 0;             // --ps_replicas: backups promoted to primary
  uint64_t gradients_dropped = 0;        // by the staleness policy (async)
  uint64_t stale_gradients_dropped = 0;  // sync: stale pushes; async: as above
  // -1 while no checkpoint was saved by this chief (or without checkpoints).
  double seconds_since_checkpoint = -1;
  int consecutive_checkpoint_failures = 0;
  // --follow: files trained, their lines, and the progressive validation
  // of the newest file and of the window (scheduler/progressive_window.h).
  int64_t stream_files = -1;  // -1: not streaming, none exported
  int64_t stream_examples = 0;
  double progressive_auc = 0, progressive_log_loss = 0;
  double window_auc = 0, window_log_loss = 0;
};

// One container's share of a ps shard (ps/container.h): the default
// container's name is "".
struct ContainerLoad {
  std::string name;
  uint64_t variables = 0;
  uint64_t bytes_held = 0;
  uint64_t updates_applied = 0;
  uint64_t pulls = 0;
  uint64_t pushes = 0;
};

// One embedding table's part on a ps shard (ps/sparse/embedding_table.h).
struct TableMetrics {
  std::string name;
  int64_t rows_held = 0;
  int64_t rows_created = 0;
  int64_t rows_evicted = 0;
  int64_t keys_refused = 0;
  int64_t rows_dropped = 0;
  uint64_t bytes = 0;
};

// One shard replica a ps holds (--ps_replicas; ps/replica_shards.h).
struct ReplicaMetrics {
  int shard = 0;
  int64_t epoch = 0;
  bool primary = false;
  uint64_t rounds = 0;           // as the primary: shipments to every backup
  uint64_t bytes_shipped = 0;    // as the primary
  uint64_t shipments_taken = 0;  // as a backup
  int64_t filled_at_epoch = 0;   // as a backup: holds its primary's state of this epoch
};

// A ps shard's load, as its status request reports it.
struct ShardLoad {
  int shard = 0;
  bool initialized = false;
  uint64_t variables = 0;
  uint64_t bytes_held = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t updates_applied = 0;
  uint64_t gradients_dropped = 0;
  uint64_t queue_depth = 0;
  std::vector<ContainerLoad> containers;
  std::vector<TableMetrics> tables;  // the default container's
  std::vector<ReplicaMetrics> replicas;
};

std::string TrainingMetricsText(const TrainingSnapshot& s);
std::string ShardMetricsText(const ShardLoad& load);

// The chief's newest snapshot, written by its main loop and read by the
// endpoint's thread. Thread-safe.
class TrainingMetrics {
 public:
  // Applies `update` to the snapshot under the lock.
  template <typename Fn>
  void Update(Fn update) {
    MutexLock lock(mu_);
    update(snapshot_);
  }
  TrainingSnapshot Get() const {
    MutexLock lock(mu_);
    return snapshot_;
  }
  std::string Text() const { return TrainingMetricsText(Get()); }

 private:
  mutable Mutex mu_;
  TrainingSnapshot snapshot_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_MONITORING_TRAINING_METRICS_H_
