#include "monitoring/training_metrics.h"

#include "monitoring/prometheus_text.h"

namespace pst {

std::string TrainingMetricsText(const TrainingSnapshot& s) {
  PrometheusText t;
  // The global step is the ps's counter, but a chief that restores a
  // checkpoint moves it back: a gauge, not a counter.
  t.AddGauge("pstrain_global_step", "Global step of the cluster", s.global_step);
  t.AddGauge("pstrain_train_steps", "Global step at which training ends (--train_steps)",
             s.train_steps);
  t.AddGauge("pstrain_steps_per_second", "Global steps per second since training opened",
             s.steps_per_second);
  t.AddGauge("pstrain_examples_per_second",
             "Training examples per second since training opened, all workers",
             s.examples_per_second);
  t.AddGauge("pstrain_train_loss", "Mean training loss of the newest worker reports", s.train_loss);
  t.AddGauge("pstrain_learning_rate",
             "Learning rate of the next update (--lr_schedule at the global step)",
             s.learning_rate);
  if (s.evaluated) {
    t.AddGauge("pstrain_test_accuracy", "Test-set accuracy at the newest evaluation",
               s.test_accuracy);
    t.AddGauge("pstrain_test_loss", "Test-set loss at the newest evaluation", s.test_loss);
    if (s.test_auc >= 0) {
      t.AddGauge("pstrain_test_auc", "Click models: exact test-set AUC at the newest evaluation",
                 s.test_auc);
      t.AddGauge("pstrain_test_log_loss",
                 "Click models: test-set log-loss at the newest evaluation", s.test_log_loss);
    }
  }
  if (s.stream_files >= 0) {
    t.AddCounter("pstrain_stream_files_total", "--follow: files trained to their end",
                 s.stream_files);
    t.AddCounter("pstrain_stream_examples_total", "--follow: lines of the files trained",
                 s.stream_examples);
    t.AddGauge("pstrain_progressive_auc",
               "--follow: AUC of the newest file, each line predicted before training on it",
               s.progressive_auc);
    t.AddGauge("pstrain_progressive_log_loss", "--follow: log-loss of the newest file, likewise",
               s.progressive_log_loss);
    t.AddGauge("pstrain_progressive_window_auc",
               "--follow: progressive AUC over the newest files, weighted by their lines",
               s.window_auc);
    t.AddGauge("pstrain_progressive_window_log_loss",
               "--follow: progressive log-loss over the newest files, likewise", s.window_log_loss);
  }
  t.AddGauge("pstrain_live_workers", "Workers that joined and are neither gone nor dead",
             s.live_workers);
  t.AddGauge("pstrain_live_ps", "Ps tasks heard from and not declared dead", s.live_ps);
  t.AddCounter("pstrain_task_deaths_total", "Times a task was declared dead", s.task_deaths);
  t.AddCounter("pstrain_ps_promotions_total",
               "Backups promoted to primary when a ps was lost (--ps_replicas)", s.ps_promotions);
  t.AddCounter("pstrain_gradients_dropped_total",
               "Gradients the ps dropped by the staleness policy", s.gradients_dropped);
  t.AddCounter("pstrain_stale_gradients_dropped_total",
               "Stale gradients dropped (sync: stale pushes; async: by the staleness policy)",
               s.stale_gradients_dropped);
  if (s.seconds_since_checkpoint >= 0) {
    t.AddGauge("pstrain_checkpoint_age_seconds",
               "Seconds since the last successful checkpoint of this chief",
               s.seconds_since_checkpoint);
  }
  t.AddGauge("pstrain_checkpoint_consecutive_failures",
             "Checkpoints that failed in a row (--max_checkpoint_failures stops the run)",
             s.consecutive_checkpoint_failures);
  return t.text();
}

namespace {

// One sample of `name` per container the shard holds (the default one as
// container="").
void AddPerContainer(PrometheusText& t, const ShardLoad& load, const std::string& name,
                     const std::string& help, uint64_t ContainerLoad::*field,
                     PrometheusText::Type type = PrometheusText::Type::kGauge) {
  for (const ContainerLoad& c : load.containers) {
    t.Add(type, name, help, static_cast<double>(c.*field),
          {{"shard", std::to_string(load.shard)}, {"container", c.name}});
  }
}

// One sample per replica the ps holds, labelled with the shard it copies.
template <typename Value>
void AddPerReplica(PrometheusText& t, const ShardLoad& load, PrometheusText::Type type,
                   const std::string& name, const std::string& help, Value value) {
  for (const ReplicaMetrics& r : load.replicas) {
    t.Add(type, name, help, static_cast<double>(value(r)),
          {{"shard", std::to_string(load.shard)}, {"replica_of", std::to_string(r.shard)}});
  }
}

}  // namespace

std::string ShardMetricsText(const ShardLoad& load) {
  PrometheusText t;
  const PrometheusLabels shard = {{"shard", std::to_string(load.shard)}};
  t.AddGauge("pstrain_ps_initialized", "1 when the shard holds its variables",
             load.initialized ? 1 : 0, shard);
  t.AddGauge("pstrain_ps_variables", "Variables (or slices) the shard holds", load.variables,
             shard);
  t.AddGauge("pstrain_ps_bytes_held", "Bytes of variable values the shard holds", load.bytes_held,
             shard);
  t.AddCounter("pstrain_ps_received_bytes_total", "Request bytes received", load.bytes_in, shard);
  t.AddCounter("pstrain_ps_sent_bytes_total", "Reply bytes sent", load.bytes_out, shard);
  t.AddCounter("pstrain_ps_updates_applied_total", "Gradient updates applied", load.updates_applied,
               shard);
  t.AddCounter("pstrain_ps_gradients_dropped_total", "Gradients dropped by the staleness policy",
               load.gradients_dropped, shard);
  t.AddGauge("pstrain_ps_queue_depth", "Requests received and not yet being served",
             load.queue_depth, shard);
  AddPerContainer(t, load, "pstrain_ps_container_variables", "Variables a container holds",
                  &ContainerLoad::variables);
  const auto g = PrometheusText::Type::kGauge;
  const auto c = PrometheusText::Type::kCounter;
  AddPerReplica(t, load, g, "pstrain_ps_replica_epoch", "The epoch of the chain this replica holds",
                [](const ReplicaMetrics& r) { return r.epoch; });
  AddPerReplica(t, load, g, "pstrain_ps_replica_primary",
                "1 when this replica is its shard's primary",
                [](const ReplicaMetrics& r) { return r.primary ? 1 : 0; });
  AddPerReplica(t, load, c, "pstrain_ps_replica_rounds_total",
                "As the primary: rounds shipped to every backup",
                [](const ReplicaMetrics& r) { return r.rounds; });
  AddPerReplica(t, load, c, "pstrain_ps_replica_shipped_bytes_total",
                "As the primary: bytes shipped",
                [](const ReplicaMetrics& r) { return r.bytes_shipped; });
  AddPerReplica(t, load, c, "pstrain_ps_replica_shipments_taken_total",
                "As a backup: shipments taken from the primary",
                [](const ReplicaMetrics& r) { return r.shipments_taken; });
  AddPerReplica(t, load, g, "pstrain_ps_replica_filled_at_epoch",
                "As a backup: the epoch of the primary's state it holds (0: none yet)",
                [](const ReplicaMetrics& r) { return r.filled_at_epoch; });
  for (const TableMetrics& table : load.tables) {
    const PrometheusLabels labels = {{"shard", std::to_string(load.shard)}, {"table", table.name}};
    t.AddGauge("pstrain_ps_table_rows", "Rows an embedding table holds on the shard",
               static_cast<double>(table.rows_held), labels);
    t.AddCounter("pstrain_ps_table_rows_created_total", "Rows a dynamic table created",
                 static_cast<double>(table.rows_created), labels);
    t.AddCounter("pstrain_ps_table_rows_evicted_total",
                 "Rows a dynamic table evicted (least recently used) to make room",
                 static_cast<double>(table.rows_evicted), labels);
    t.AddCounter("pstrain_ps_table_keys_refused_total",
                 "Pulled keys a dynamic table has not admitted yet (--embedding_min_count)",
                 static_cast<double>(table.keys_refused), labels);
    t.AddCounter("pstrain_ps_table_rows_dropped_total",
                 "Gradient rows for keys the table does not hold",
                 static_cast<double>(table.rows_dropped), labels);
    t.AddGauge("pstrain_ps_table_bytes", "Bytes of rows and optimizer slots the table holds",
               static_cast<double>(table.bytes), labels);
  }
  AddPerContainer(t, load, "pstrain_ps_container_bytes_held", "Bytes of values a container holds",
                  &ContainerLoad::bytes_held);
  AddPerContainer(t, load, "pstrain_ps_container_updates_applied_total",
                  "Gradient updates applied to a container", &ContainerLoad::updates_applied,
                  PrometheusText::Type::kCounter);
  AddPerContainer(t, load, "pstrain_ps_container_pulls_total", "Pulls served from a container",
                  &ContainerLoad::pulls, PrometheusText::Type::kCounter);
  AddPerContainer(t, load, "pstrain_ps_container_pushes_total", "Pushes applied to a container",
                  &ContainerLoad::pushes, PrometheusText::Type::kCounter);
  return t.text();
}

}  // namespace pst
