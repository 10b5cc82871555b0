#include "monitoring/training_metrics.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(TrainingMetricsTest, ExportsTheSnapshot) {
  TrainingMetrics metrics;
  metrics.Update([](TrainingSnapshot& s) {
    s.global_step = 120;
    s.steps_per_second = 40.5;
    s.live_workers = 3;
    s.stale_gradients_dropped = 2;
    s.learning_rate = 0.125;
  });
  const std::string text = metrics.Text();
  EXPECT_TRUE(Has(text, "pstrain_learning_rate 0.125")) << text;
  EXPECT_TRUE(Has(text, "pstrain_global_step 120")) << text;
  EXPECT_TRUE(Has(text, "pstrain_steps_per_second 40.5")) << text;
  EXPECT_TRUE(Has(text, "pstrain_live_workers 3")) << text;
  EXPECT_TRUE(Has(text, "pstrain_stale_gradients_dropped_total 2")) << text;
  // Not known yet: not exported (a 0 would read as a real value).
  EXPECT_EQ(text.find("pstrain_test_accuracy"), std::string::npos) << text;
  EXPECT_EQ(text.find("pstrain_checkpoint_age_seconds"), std::string::npos) << text;

  metrics.Update([](TrainingSnapshot& s) {
    s.evaluated = true;
    s.test_accuracy = 0.75;
    s.seconds_since_checkpoint = 3;
  });
  const std::string later = metrics.Text();
  EXPECT_TRUE(Has(later, "pstrain_test_accuracy 0.75")) << later;
  EXPECT_TRUE(Has(later, "pstrain_checkpoint_age_seconds 3")) << later;
  EXPECT_TRUE(Has(later, "pstrain_global_step 120")) << later;
}

TEST(TrainingMetricsTest, ShardLoadIsLabelledWithTheShard) {
  ShardLoad load;
  load.shard = 2;
  load.bytes_in = 4096;
  load.queue_depth = 1;
  const std::string text = ShardMetricsText(load);
  EXPECT_TRUE(Has(text, "pstrain_ps_received_bytes_total{shard=\"2\"} 4096")) << text;
  EXPECT_TRUE(Has(text, "pstrain_ps_queue_depth{shard=\"2\"} 1")) << text;
}

TEST(TrainingMetricsTest, EachReplicaIsLabelledWithTheShardItCopies) {
  ShardLoad load;
  load.shard = 2;
  load.replicas.push_back({/*shard=*/2, /*epoch=*/3, /*primary=*/true, /*rounds=*/40,
                           /*bytes_shipped=*/1000, 0, 0});
  load.replicas.push_back({1, 3, false, 0, 0, /*shipments_taken=*/38, /*filled_at_epoch=*/3});
  const std::string text = ShardMetricsText(load);
  EXPECT_TRUE(Has(text, "pstrain_ps_replica_primary{shard=\"2\",replica_of=\"2\"} 1")) << text;
  EXPECT_TRUE(Has(text, "pstrain_ps_replica_rounds_total{shard=\"2\",replica_of=\"2\"} 40"))
      << text;
  EXPECT_TRUE(Has(text, "pstrain_ps_replica_primary{shard=\"2\",replica_of=\"1\"} 0")) << text;
  EXPECT_TRUE(
      Has(text, "pstrain_ps_replica_shipments_taken_total{shard=\"2\",replica_of=\"1\"} 38"))
      << text;
  EXPECT_TRUE(Has(text, "pstrain_ps_replica_filled_at_epoch{shard=\"2\",replica_of=\"1\"} 3"))
      << text;
}

}  // namespace
}  // namespace pst
