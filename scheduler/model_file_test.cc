#include "scheduler/model_file.h"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

namespace pst {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

NamedTensors Sample() {
  Tensor w(DType::kFloat32, {3, 2});
  for (int i = 0; i < 6; ++i) w.f32()[i] = i * 1.5f;
  Tensor step(DType::kInt64, {});
  step.i64()[0] = 1234;
  return {{"dense0/weights", w}, {"global_step", step}};
}

TEST(ModelFileTest, RoundTrip) {
  const std::string path = TempPath("roundtrip.bin");
  ASSERT_TRUE(WriteModelFile(path, Sample()).ok());
  auto read = ReadModelFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].first, "dense0/weights");
  EXPECT_EQ((*read)[0].second.shape(), (Shape{3, 2}));
  EXPECT_EQ((*read)[0].second.f32()[5], 7.5f);
  EXPECT_EQ((*read)[1].second.i64()[0], 1234);
}

TEST(ModelFileTest, FlippedByteFailsChecksum) {
  const std::string path = TempPath("flipped.bin");
  ASSERT_TRUE(WriteModelFile(path, Sample()).ok());
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(30);
  f.put('\x7f');
  f.close();
  auto read = ReadModelFile(path);
  EXPECT_EQ(read.status().code(), Code::kDataLoss);
  EXPECT_NE(read.status().message().find(path), std::string::npos);
}

TEST(ModelFileTest, TruncatedFileIsDataLoss) {
  const std::string path = TempPath("truncated.bin");
  ASSERT_TRUE(WriteModelFile(path, Sample()).ok());
  ASSERT_EQ(truncate(path.c_str(), 40), 0);
  EXPECT_EQ(ReadModelFile(path).status().code(), Code::kDataLoss);
}

TEST(ModelFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadModelFile(TempPath("absent.bin")).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pst
