#include "common/tensor_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace pst {
namespace {

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

NamedTensors Sample() {
  Tensor w(DType::kFloat32, {3, 2});
  for (int i = 0; i < 6; ++i) w.f32()[i] = i * 1.5f;
  Tensor step(DType::kInt64, {});
  step.i64()[0] = 1234;
  return {{"dense0/weights", w}, {"global_step", step}};
}

TEST(TensorFileTest, RoundTrip) {
  const std::string path = TempPath("roundtrip.bin");
  ASSERT_TRUE(WriteTensorFile(path, Sample()).ok());
  auto read = ReadTensorFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].first, "dense0/weights");
  EXPECT_EQ((*read)[0].second.shape(), (Shape{3, 2}));
  EXPECT_EQ((*read)[0].second.f32()[5], 7.5f);
  EXPECT_EQ((*read)[1].second.i64()[0], 1234);
}

// The manifest's digest must tell parts apart: two files of the same size
// and different values get different digests, and the digest is what the
// file was written with.
TEST(TensorFileTest, DigestsTellFilesOfTheSameSizeApart) {
  NamedTensors other = Sample();
  other[0].second.f32()[0] = 99;
  auto a = WriteTensorFile(TempPath("digest-a.bin"), Sample());
  auto b = WriteTensorFile(TempPath("digest-b.bin"), other);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_NE(a->crc32, b->crc32);
  auto read_a = DigestFile(TempPath("digest-a.bin"));
  ASSERT_TRUE(read_a.ok());
  EXPECT_EQ(read_a->crc32, a->crc32);
  EXPECT_EQ(read_a->bytes, a->bytes);
}

TEST(TensorFileTest, FlippedByteFailsChecksum) {
  const std::string path = TempPath("flipped.bin");
  ASSERT_TRUE(WriteTensorFile(path, Sample()).ok());
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(30);
  f.put('\x7f');
  f.close();
  auto read = ReadTensorFile(path);
  EXPECT_EQ(read.status().code(), Code::kDataLoss);
  EXPECT_NE(read.status().message().find(path), std::string::npos);
}

TEST(TensorFileTest, TruncatedFileIsDataLoss) {
  const std::string path = TempPath("truncated.bin");
  ASSERT_TRUE(WriteTensorFile(path, Sample()).ok());
  ASSERT_EQ(truncate(path.c_str(), 40), 0);
  EXPECT_EQ(ReadTensorFile(path).status().code(), Code::kDataLoss);
}

TEST(TensorFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadTensorFile(TempPath("absent.bin")).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pst
