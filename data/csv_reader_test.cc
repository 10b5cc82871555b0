#include "data/csv_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace pst {
namespace {

namespace fs = std::filesystem;

class CsvReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("csv_reader_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "data.csv").string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // The error message of reading `text`, which must fail with `code`.
  std::string ErrorOf(const std::string& text, Code code, CsvOptions options = {}) {
    options.num_classes = options.num_classes ? options.num_classes : 3;
    const Status status = ReadCsvDataset(Write(text), options).status();
    EXPECT_EQ(status.code(), code) << status.ToString();
    return status.message();
  }

  fs::path dir_;
};

TEST_F(CsvReaderTest, ReadsRowsAfterAHeader) {
  const std::string path = Write("label,x,y\r\n2, 0.5,-1e2\r\n\r\n0,3,4.25\r\n");
  StatusOr<Dataset> dataset = ReadCsvDataset(path, {0, 3});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->size, 2);
  EXPECT_EQ(dataset->feature_dim, 2);
  EXPECT_EQ(dataset->example_shape, InputShape(2));
  EXPECT_EQ(dataset->num_classes, 3);
  EXPECT_EQ(dataset->features, (std::vector<float>{0.5f, -100.0f, 3.0f, 4.25f}));
  EXPECT_EQ(dataset->labels, (std::vector<int32_t>{2, 0}));
}

TEST_F(CsvReaderTest, ReadsFileWithoutHeaderOrFinalNewline) {
  StatusOr<Dataset> dataset = ReadCsvDataset(Write("1,7\n1,8"), {0, 2});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->size, 2);
  EXPECT_EQ(dataset->features, (std::vector<float>{7.0f, 8.0f}));
}

TEST_F(CsvReaderTest, LabelInAnotherColumnAndClassCountFromTheLabels) {
  StatusOr<Dataset> dataset =
      ReadCsvDataset(Write("a,b,class\n1.5,2,4\n3,4,0\n"), {/*label_column=*/-1});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->features, (std::vector<float>{1.5f, 2.0f, 3.0f, 4.0f}));
  EXPECT_EQ(dataset->labels, (std::vector<int32_t>{4, 0}));
  EXPECT_EQ(dataset->num_classes, 5);
  dataset = ReadCsvDataset(Write("1.5,2,4\n3,0,5\n"), {/*label_column=*/1});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->labels, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(dataset->features, (std::vector<float>{1.5f, 4.0f, 3.0f, 5.0f}));
}

TEST_F(CsvReaderTest, NonNumericFeatureNamesLineAndColumn) {
  std::string message = ErrorOf("0,1,2\n1,3,abc\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("data.csv:2: column 3: 'abc' is not a finite number"), std::string::npos)
      << message;
  message = ErrorOf("y,width,height\n0,1,2\n1,3,abc\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("data.csv:3: column 3 ('height'): 'abc' is not a finite number"),
            std::string::npos)
      << message;
}

TEST_F(CsvReaderTest, EmptyAndNonFiniteFeaturesAreRejected) {
  EXPECT_NE(ErrorOf("0,1,,2\n", Code::kInvalidArgument).find("column 3: ''"), std::string::npos);
  EXPECT_NE(ErrorOf("0,1\n0,nan\n", Code::kInvalidArgument).find("'nan'"), std::string::npos);
  EXPECT_NE(ErrorOf("0,1e99\n", Code::kInvalidArgument).find("'1e99'"), std::string::npos);
}

TEST_F(CsvReaderTest, RaggedRowNamesLine) {
  const std::string message = ErrorOf("h,i,j\n0,1,2\n1,3\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("data.csv:3: row has 2 fields, but the first row (line 2) has 3"),
            std::string::npos)
      << message;
}

TEST_F(CsvReaderTest, LabelOutOfRangeNamesLine) {
  EXPECT_NE(ErrorOf("0,1\n3,1\n", Code::kInvalidArgument)
                .find("data.csv:2: column 1: label 3 is outside [0, 3)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("0,1\n-1,1\n", Code::kInvalidArgument)
                .find("data.csv:2: column 1: label -1 is outside"),
            std::string::npos);
}

TEST_F(CsvReaderTest, NonIntegerLabelIsRejected) {
  const std::string message = ErrorOf("1.5,1\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("label '1.5' is not an integer"), std::string::npos) << message;
}

TEST_F(CsvReaderTest, RowWithoutFeaturesIsRejected) {
  const std::string message = ErrorOf("1\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("at least one feature"), std::string::npos) << message;
}

TEST_F(CsvReaderTest, LabelColumnBeyondTheRowIsRejected) {
  const std::string message = ErrorOf("1,2\n", Code::kInvalidArgument, {/*label_column=*/2});
  EXPECT_NE(message.find("label column 2 is beyond the row's 2 columns"), std::string::npos)
      << message;
}

TEST_F(CsvReaderTest, FileWithoutRowsIsRejected) {
  const std::string message = ErrorOf("label,x\n\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("no data rows"), std::string::npos) << message;
}

TEST_F(CsvReaderTest, MissingFileIsNotFound) {
  const std::string path = (dir_ / "missing.csv").string();
  const Status status = ReadCsvDataset(path).status();
  EXPECT_EQ(status.code(), Code::kNotFound);
  EXPECT_NE(status.message().find(path), std::string::npos);
}

}  // namespace
}  // namespace pst
