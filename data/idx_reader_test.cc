#include "data/idx_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace pst {
namespace {

namespace fs = std::filesystem;

std::string BigEndian32(uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
          static_cast<char>(value >> 8), static_cast<char>(value)};
}

std::string ImageFile(uint32_t count, uint32_t rows, uint32_t cols,
                      const std::vector<uint8_t>& pixels) {
  return BigEndian32(0x803) + BigEndian32(count) + BigEndian32(rows) + BigEndian32(cols) +
         std::string(pixels.begin(), pixels.end());
}

std::string LabelFile(const std::vector<uint8_t>& labels) {
  return BigEndian32(0x801) + BigEndian32(static_cast<uint32_t>(labels.size())) +
         std::string(labels.begin(), labels.end());
}

// Three 2x3 images.
const std::vector<uint8_t> kPixels = {0,   255, 1,   2,   3,   4,   //
                                      10,  20,  30,  40,  50,  60,  //
                                      128, 0,   255, 255, 254, 7};
const std::vector<uint8_t> kLabels = {0, 9, 4};

class IdxReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("idx_reader_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteRaw(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  std::string WriteGzip(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    gzFile file = gzopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    EXPECT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    EXPECT_EQ(gzclose(file), Z_OK);
    return path;
  }

  fs::path dir_;
};

void ExpectMatchesTestData(const Dataset& dataset) {
  EXPECT_EQ(dataset.size, 3);
  EXPECT_EQ(dataset.feature_dim, 6);
  EXPECT_EQ(dataset.num_classes, 10);
  ASSERT_EQ(dataset.features.size(), kPixels.size());
  for (size_t i = 0; i < kPixels.size(); ++i) {
    EXPECT_FLOAT_EQ(dataset.features[i], kPixels[i] / 255.0f) << i;
  }
  EXPECT_EQ(dataset.labels, std::vector<int32_t>(kLabels.begin(), kLabels.end()));
}

TEST_F(IdxReaderTest, ReadsRawFiles) {
  const std::string images = WriteRaw("images", ImageFile(3, 2, 3, kPixels));
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  StatusOr<Dataset> dataset = ReadIdxDataset(images, labels);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ExpectMatchesTestData(*dataset);
}

TEST_F(IdxReaderTest, TellsGzipFromRawByContentNotName) {
  const std::string images = WriteGzip("images.raw", ImageFile(3, 2, 3, kPixels));
  const std::string labels = WriteRaw("labels.gz", LabelFile(kLabels));
  StatusOr<Dataset> dataset = ReadIdxDataset(images, labels);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ExpectMatchesTestData(*dataset);
}

TEST_F(IdxReaderTest, TruncatedImageFileIsDataLoss) {
  std::string bytes = ImageFile(3, 2, 3, kPixels);
  bytes.resize(bytes.size() - 10);
  const std::string images = WriteRaw("images", bytes);
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  const Status status = ReadIdxDataset(images, labels).status();
  EXPECT_EQ(status.code(), Code::kDataLoss);
  EXPECT_NE(status.message().find(images), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("3 x 2 x 3 = 18 data bytes"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("file has 8"), std::string::npos) << status.message();
}

TEST_F(IdxReaderTest, TruncatedLabelFileIsDataLoss) {
  std::string bytes = LabelFile(kLabels);
  bytes.pop_back();
  const std::string images = WriteRaw("images", ImageFile(3, 2, 3, kPixels));
  const std::string labels = WriteGzip("labels.gz", bytes);
  const Status status = ReadIdxDataset(images, labels).status();
  EXPECT_EQ(status.code(), Code::kDataLoss);
  EXPECT_NE(status.message().find(labels), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("3 data bytes, file has 2"), std::string::npos)
      << status.message();
}

TEST_F(IdxReaderTest, TruncatedHeaderIsDataLoss) {
  const std::string images = WriteRaw("images", ImageFile(3, 2, 3, kPixels).substr(0, 10));
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  const Status status = ReadIdxDataset(images, labels).status();
  EXPECT_EQ(status.code(), Code::kDataLoss);
  EXPECT_NE(status.message().find("16-byte IDX header, file has 10"), std::string::npos)
      << status.message();
}

TEST_F(IdxReaderTest, CutGzipStreamIsDataLoss) {
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  const std::string whole = WriteGzip("whole.gz", ImageFile(3, 2, 3, kPixels));
  std::ifstream in(whole, std::ios::binary);
  const std::string gzip((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Cut inside the compressed data, then inside the 8-byte trailer (after all
  // the data has been decompressed).
  for (size_t keep : {gzip.size() / 2, gzip.size() - 3}) {
    const std::string images = WriteRaw("cut.gz", gzip.substr(0, keep));
    const Status status = ReadIdxDataset(images, labels).status();
    EXPECT_EQ(status.code(), Code::kDataLoss) << keep;
    EXPECT_NE(status.message().find(images), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("gzip stream ends early"), std::string::npos)
        << status.message();
  }
}

TEST_F(IdxReaderTest, TrailingBytesAreDataLoss) {
  const std::string images = WriteRaw("images", ImageFile(3, 2, 3, kPixels) + "xyz");
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  const Status status = ReadIdxDataset(images, labels).status();
  EXPECT_EQ(status.code(), Code::kDataLoss);
  EXPECT_NE(status.message().find("18 data bytes, file has 21"), std::string::npos)
      << status.message();
}

TEST_F(IdxReaderTest, WrongMagicIsInvalidArgument) {
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  // Files passed the wrong way round.
  const Status status = ReadIdxDataset(labels, labels).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find(labels), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("0x00000801"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("0x00000803"), std::string::npos) << status.message();
}

TEST_F(IdxReaderTest, CountMismatchIsInvalidArgument) {
  const std::string images = WriteRaw("images", ImageFile(3, 2, 3, kPixels));
  const std::string labels = WriteRaw("labels", LabelFile({1, 2}));
  const Status status = ReadIdxDataset(images, labels).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("3 images"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("2 labels"), std::string::npos) << status.message();
}

TEST_F(IdxReaderTest, LabelAboveNineIsInvalidArgument) {
  const std::string images = WriteRaw("images", ImageFile(3, 2, 3, kPixels));
  const std::string labels = WriteRaw("labels", LabelFile({0, 1, 10}));
  const Status status = ReadIdxDataset(images, labels).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("label 10 of example 2"), std::string::npos) << status.message();
}

TEST_F(IdxReaderTest, MissingFileIsNotFound) {
  const std::string labels = WriteRaw("labels", LabelFile(kLabels));
  const std::string missing = (dir_ / "no-such-images").string();
  const Status status = ReadIdxDataset(missing, labels).status();
  EXPECT_EQ(status.code(), Code::kNotFound);
  EXPECT_NE(status.message().find(missing), std::string::npos) << status.message();
}

TEST_F(IdxReaderTest, LoadMnistTakesFilesWithOrWithoutGz) {
  WriteGzip("t10k-images-idx3-ubyte.gz", ImageFile(3, 2, 3, kPixels));
  WriteRaw("t10k-labels-idx1-ubyte", LabelFile(kLabels));
  StatusOr<Dataset> dataset = LoadMnist(dir_.string(), /*train=*/false);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ExpectMatchesTestData(*dataset);
}

TEST_F(IdxReaderTest, LoadMnistSaysWhatItLookedForAndHowToFetch) {
  const std::string dir = dir_.string();
  const Status status = LoadMnist(dir, /*train=*/true).status();
  EXPECT_EQ(status.code(), Code::kNotFound);
  EXPECT_NE(status.message().find(dir + "/train-images-idx3-ubyte.gz"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("scripts/get_mnist.sh " + dir), std::string::npos)
      << status.message();
}

TEST(IdxReaderMnistTest, FullMnist) {
  const char* dir = std::getenv("MNIST_DIR");
  if (dir == nullptr || *dir == '\0') {
    GTEST_SKIP() << "MNIST_DIR not set: skipping the full-MNIST check";
  }
  for (const bool train : {true, false}) {
    StatusOr<Dataset> dataset = LoadMnist(dir, train);
    ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
    EXPECT_EQ(dataset->size, train ? 60000 : 10000);
    EXPECT_EQ(dataset->feature_dim, 784);
    EXPECT_EQ(dataset->num_classes, 10);
    ASSERT_EQ(dataset->features.size(), dataset->size * 784u);
    ASSERT_EQ(dataset->labels.size(), static_cast<size_t>(dataset->size));
    const auto [min, max] = std::minmax_element(dataset->features.begin(), dataset->features.end());
    EXPECT_EQ(*min, 0.0f);
    EXPECT_EQ(*max, 1.0f);
  }
}

}  // namespace
}  // namespace pst
