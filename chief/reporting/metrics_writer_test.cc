#include "chief/reporting/metrics_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>

namespace pst {
namespace {

TEST(MetricsWriterTest, WritesOneJsonObjectPerLine) {
  const std::string path = ::testing::TempDir() + "/metrics.jsonl";
  {
    auto writer = MetricsWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    MetricsRecord a;
    a.Add("step", 100).Add("test_accuracy", 0.9712);
    ASSERT_TRUE((*writer)->Write(a).ok());
    MetricsRecord b;
    b.Add("step", 200).Add("loss", std::numeric_limits<double>::quiet_NaN());
    ASSERT_TRUE((*writer)->Write(b).ok());
  }
  std::ifstream in(path);
  std::string line1, line2;
  std::getline(in, line1);
  std::getline(in, line2);
  EXPECT_EQ(line1, "{\"step\": 100, \"test_accuracy\": 0.9712}");
  EXPECT_EQ(line2, "{\"step\": 200, \"loss\": null}");
}

TEST(MetricsWriterTest, UnwritablePathIsAnError) {
  EXPECT_FALSE(MetricsWriter::Open("/nonexistent-dir/metrics.jsonl").ok());
}

}  // namespace
}  // namespace pst
