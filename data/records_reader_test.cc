#include "data/records_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace pst {
namespace {

namespace fs = std::filesystem;

class RecordsReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("records_reader_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return path;
  }

  fs::path dir_;
};

// Two 1x2 images with 2 channels, as CIFAR stores them: label, then all of
// channel 0, then all of channel 1.
TEST_F(RecordsReaderTest, ReadsChannelMajorRecordsIntoHwcPixels) {
  const std::string a = Write("a.bin", {3, 0, 51, 102, 255});
  const std::string b = Write("b.bin", {1, 255, 0, 0, 51});
  StatusOr<Dataset> d = ReadRecordsDataset({a, b}, {InputShape({1, 2, 2})});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->size, 2);
  EXPECT_EQ(d->feature_dim, 4);
  EXPECT_EQ(d->example_shape, InputShape({1, 2, 2}));
  EXPECT_EQ(d->labels, (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(d->num_classes, 4);
  const std::vector<float> expected = {0, 0.4f, 0.2f, 1, 1, 0, 0, 0.2f};
  ASSERT_EQ(d->features.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ(d->features[i], expected[i]) << i;
}

TEST_F(RecordsReaderTest, TwoLabelBytesUseTheLast) {
  StatusOr<Dataset> d =
      ReadRecordsDataset({Write("c.bin", {9, 2, 7})}, {InputShape({1, 1, 1}), /*label_bytes=*/2});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->labels, (std::vector<int32_t>{2}));
}

TEST_F(RecordsReaderTest, TruncatedRecordIsDataLossNamingTheFile) {
  const std::string path = Write("t.bin", {1, 2, 3, 4, 5, 6});
  const Status s = ReadRecordsDataset({path}, {InputShape({2, 2, 1})}).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(path + ": 6 bytes is not a whole number of 5-byte records"),
            std::string::npos)
      << s.message();
}

TEST_F(RecordsReaderTest, LabelBeyondTheClassesNamesTheRecord) {
  const Status s =
      ReadRecordsDataset({Write("l.bin", {0, 1, 12, 1})}, {InputShape({1, 1, 1}), 1, 10}).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("l.bin: record 1: label 12 is outside [0, 10)"), std::string::npos)
      << s.message();
}

TEST_F(RecordsReaderTest, BadShapeAndMissingFileAreClearErrors) {
  EXPECT_EQ(ReadRecordsDataset({Write("x.bin", {0, 1})}, {InputShape({1, 1})}).status().code(),
            Code::kInvalidArgument);
  const Status s =
      ReadRecordsDataset({(dir_ / "none.bin").string()}, {InputShape({1, 1, 1})}).status();
  EXPECT_EQ(s.code(), Code::kNotFound);
}

// A float32 record: the label byte, then each value's 4 little-endian bytes.
std::vector<uint8_t> FloatRecord(uint8_t label, const std::vector<float>& values) {
  std::vector<uint8_t> bytes = {label};
  for (float v : values) {
    uint8_t b[sizeof(float)];
    std::memcpy(b, &v, sizeof(float));
    bytes.insert(bytes.end(), b, b + sizeof(float));
  }
  return bytes;
}

RecordsOptions FloatOptions(InputShape shape) {
  RecordsOptions o{shape};
  o.dtype = RecordDtype::kFloat32;
  return o;
}

// Float values are taken exactly as written (no scaling), channel-major to
// HWC as with bytes; a shape of D features reads them in order.
TEST_F(RecordsReaderTest, Float32RecordsRoundTripExactly) {
  std::vector<uint8_t> bytes = FloatRecord(2, {-1.5f, 3e-8f, 1e30f});
  const std::vector<uint8_t> second = FloatRecord(0, {0.1f, -0.0f, 7.25f});
  bytes.insert(bytes.end(), second.begin(), second.end());
  StatusOr<Dataset> d = ReadRecordsDataset({Write("f.bin", bytes)}, FloatOptions(InputShape(3)));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->size, 2);
  EXPECT_EQ(d->example_shape, InputShape(3));
  EXPECT_EQ(d->labels, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(d->features, (std::vector<float>{-1.5f, 3e-8f, 1e30f, 0.1f, -0.0f, 7.25f}));

  // 1x2 image, 2 channels: channel 0 is (1, 2), channel 1 is (3, 4).
  d = ReadRecordsDataset({Write("g.bin", FloatRecord(1, {1, 2, 3, 4}))},
                         FloatOptions(InputShape({1, 2, 2})));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->features, (std::vector<float>{1, 3, 2, 4}));
}

TEST_F(RecordsReaderTest, TruncatedFloat32RecordIsDataLossNamingTheFile) {
  std::vector<uint8_t> bytes = FloatRecord(1, {1, 2});
  bytes.pop_back();
  const std::string path = Write("tf.bin", bytes);
  const Status s = ReadRecordsDataset({path}, FloatOptions(InputShape(2))).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(path + ": 8 bytes is not a whole number of 9-byte records"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("float32 values"), std::string::npos) << s.message();
}

TEST_F(RecordsReaderTest, NonFiniteFloat32IsRefusedNamingFileAndRecord) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    std::vector<uint8_t> bytes = FloatRecord(0, {1, 2});
    const std::vector<uint8_t> second = FloatRecord(1, {3, bad});
    bytes.insert(bytes.end(), second.begin(), second.end());
    const Status s =
        ReadRecordsDataset({Write("nf.bin", bytes)}, FloatOptions(InputShape(2))).status();
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("nf.bin: record 1: value 1 is not a finite number"),
              std::string::npos)
        << s.message();
  }
}

TEST_F(RecordsReaderTest, ParsesRecordDtypeNames) {
  EXPECT_EQ(*ParseRecordDtype("uint8"), RecordDtype::kUint8);
  EXPECT_EQ(*ParseRecordDtype("float32"), RecordDtype::kFloat32);
  const Status s = ParseRecordDtype("float64").status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'float64'; known: uint8, float32"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace pst
