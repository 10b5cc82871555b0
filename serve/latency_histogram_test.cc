#include "serve/latency_histogram.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(LatencyHistogramTest, BucketsFrom100MicrosecondsTo10Seconds) {
  const std::vector<double>& bounds = LatencyHistogram::Bounds();
  EXPECT_EQ(bounds.front(), 100e-6);
  EXPECT_EQ(bounds.back(), 10);
  for (size_t i = 1; i < bounds.size(); ++i) EXPECT_LT(bounds[i - 1], bounds[i]);
}

TEST(LatencyHistogramTest, WritesCumulativeBucketsSumAndCount) {
  LatencyHistogram histogram;
  histogram.Observe(50e-6);   // le 0.0001
  histogram.Observe(100e-6);  // le 0.0001: a bound is its own bucket's
  histogram.Observe(0.003);   // le 0.005
  histogram.Observe(60);      // +Inf only
  std::string page;
  histogram.AppendPrometheus("pstrain_x_seconds", "Some help", &page);
  EXPECT_EQ(
      page.rfind("# HELP pstrain_x_seconds Some help\n# TYPE pstrain_x_seconds histogram\n", 0), 0u)
      << page;
  for (const char* line :
       {"pstrain_x_seconds_bucket{le=\"0.0001\"} 2\n",
        "pstrain_x_seconds_bucket{le=\"0.0025\"} 2\n", "pstrain_x_seconds_bucket{le=\"0.005\"} 3\n",
        "pstrain_x_seconds_bucket{le=\"10\"} 3\n", "pstrain_x_seconds_bucket{le=\"+Inf\"} 4\n",
        "pstrain_x_seconds_count 4\n"}) {
    EXPECT_NE(page.find(line), std::string::npos) << line << " in\n" << page;
  }
  EXPECT_NE(page.find("pstrain_x_seconds_sum 60.0031"), std::string::npos) << page;
  EXPECT_EQ(histogram.count(), 4);
}

}  // namespace
}  // namespace pst
