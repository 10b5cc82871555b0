#include "monitoring/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace pst {
namespace {

TEST(PrometheusTextTest, WritesHelpAndTypeOncePerFamily) {
  PrometheusText t;
  t.AddGauge("pstrain_a", "An a", 1.5);
  t.AddCounter("pstrain_b_total", "A b", 3, {{"shard", "0"}});
  t.AddCounter("pstrain_b_total", "A b", 4, {{"shard", "1"}});
  EXPECT_EQ(t.text(),
            "# HELP pstrain_a An a\n"
            "# TYPE pstrain_a gauge\n"
            "pstrain_a 1.5\n"
            "# HELP pstrain_b_total A b\n"
            "# TYPE pstrain_b_total counter\n"
            "pstrain_b_total{shard=\"0\"} 3\n"
            "pstrain_b_total{shard=\"1\"} 4\n");
}

TEST(PrometheusTextTest, EscapesLabelValuesAndHelp) {
  PrometheusText t;
  t.AddGauge("pstrain_x", "back\\slash\nnewline \"quotes\" stay", 0,
             {{"path", "a\\b\"c\nd"}, {"k", "v"}});
  EXPECT_EQ(t.text(),
            "# HELP pstrain_x back\\\\slash\\nnewline \"quotes\" stay\n"
            "# TYPE pstrain_x gauge\n"
            "pstrain_x{path=\"a\\\\b\\\"c\\nd\",k=\"v\"} 0\n");
}

TEST(PrometheusTextTest, WritesSpecialAndLargeValues) {
  EXPECT_EQ(PrometheusValue(std::nan("")), "NaN");
  EXPECT_EQ(PrometheusValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(PrometheusValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(PrometheusValue(-7), "-7");
  EXPECT_EQ(PrometheusValue(123456789012), "123456789012");
  EXPECT_EQ(PrometheusValue(0.25), "0.25");
  EXPECT_EQ(std::stod(PrometheusValue(1e300)), 1e300);
  EXPECT_EQ(PrometheusValue(0.9238), "0.9238");                 // not 0.92379999999999995
  EXPECT_EQ(std::stod(PrometheusValue(0.1 + 0.2)), 0.1 + 0.2);  // needs 17 digits
}

TEST(PrometheusTextDeathTest, RefusesBadNamesAndReopenedFamilies) {
  PrometheusText t;
  EXPECT_DEATH(t.AddGauge("9lives", "", 1), "bad metric name");
  EXPECT_DEATH(t.AddGauge("has space", "", 1), "bad metric name");
  EXPECT_DEATH(t.AddGauge("pstrain_ok", "", 1, {{"le:x", "1"}}), "bad label name");
  t.AddGauge("pstrain_a", "", 1);
  t.AddGauge("pstrain_b", "", 1);
  EXPECT_DEATH(t.AddGauge("pstrain_a", "", 2), "reopened");
}

}  // namespace
}  // namespace pst
