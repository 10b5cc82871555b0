#include "data/libsvm_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/testing/same_dataset.h"
namespace pst {
namespace {

namespace fs = std::filesystem;

class LibsvmReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("libsvm_reader_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "a9a.txt").string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string ErrorOf(const std::string& text) {
    const Status status = ReadLibsvmDataset(Write(text)).status();
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << status.ToString();
    return status.message();
  }

  fs::path dir_;
};

TEST_F(LibsvmReaderTest, ReadsLabelsAndPairs) {
  const std::string text =
      "+1 3:1 11:0.5 14:-2e-1\n"
      "-1\t5:1\t7:1 # a comment\n"
      "\n"
      "# a comment line\n"
      "1 0:3\r\n"
      "0\n"
      "1.0 2:1";
  StatusOr<Dataset> dataset = ReadLibsvmDataset(Write(text));
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = *dataset;
  EXPECT_EQ(d.size, 5);
  EXPECT_EQ(d.num_classes, 2);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{1, 0, 1, 0, 1}));
  EXPECT_EQ(d.feature_dim, 0);
  EXPECT_TRUE(d.features.empty());
  EXPECT_EQ(d.num_fields, 1);
  EXPECT_EQ(d.sparse_offsets, (std::vector<int64_t>{0, 3, 5, 6, 6, 7}));
  EXPECT_EQ(d.sparse_keys, (std::vector<int64_t>{3, 11, 14, 5, 7, 0, 2}));
  EXPECT_EQ(d.sparse_fields, std::vector<int32_t>(7, 0));
  EXPECT_EQ(d.sparse_values, (std::vector<float>{1, 0.5f, -0.2f, 1, 1, 3, 1}));
}

TEST_F(LibsvmReaderTest, ReadsGzipAndALineLongerThanAReadChunk) {
  // 700,000 pairs on one line (about 7 MB) outgrow the reader's 4 MB buffer.
  std::string text = "1";
  for (int j = 1; j <= 700000; ++j) text += " " + std::to_string(j) + ":1";
  text += "\n0 9:2\n";
  const std::string path = (dir_ / "long").string();
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  StatusOr<Dataset> dataset = ReadLibsvmDataset(path);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->size, 2);
  EXPECT_EQ(dataset->sparse_offsets, (std::vector<int64_t>{0, 700000, 700001}));
  EXPECT_EQ(dataset->sparse_keys[699999], 700000);
  EXPECT_EQ(dataset->sparse_keys[700000], 9);
  EXPECT_EQ(dataset->sparse_values[700000], 2.0f);
}

TEST_F(LibsvmReaderTest, BadLabelNamesFileAndLine) {
  for (const char* label : {"2", "-2", "0.5", "yes", "1:1"}) {
    const std::string message = ErrorOf("1 1:1\n" + std::string(label) + " 2:1\n");
    EXPECT_NE(message.find("a9a.txt:2: label '" + std::string(label) + "' is not 0, 1, -1 or +1"),
              std::string::npos)
        << message;
  }
}

TEST_F(LibsvmReaderTest, MalformedPairNamesFileLineAndToken) {
  std::string message = ErrorOf("1 1:1\n\n0 4:1 5\n");
  EXPECT_NE(message.find("a9a.txt:3: token 3 '5': expected index:value"), std::string::npos)
      << message;
  message = ErrorOf("0 x:1\n");
  EXPECT_NE(message.find("a9a.txt:1: token 2 'x:1': index 'x' is not an integer >= 0"),
            std::string::npos)
      << message;
  EXPECT_NE(ErrorOf("0 -3:1\n").find("token 2 '-3:1': index '-3'"), std::string::npos);
  EXPECT_NE(ErrorOf("0 :1\n").find("token 2 ':1': index ''"), std::string::npos);
  message = ErrorOf("1 2:1 3:abc\n");
  EXPECT_NE(message.find("a9a.txt:1: token 3 '3:abc': value 'abc' is not a finite number"),
            std::string::npos)
      << message;
  EXPECT_NE(ErrorOf("1 3:\n").find("token 2 '3:': value ''"), std::string::npos);
  EXPECT_NE(ErrorOf("1 3:nan\n").find("value 'nan'"), std::string::npos);
  EXPECT_NE(ErrorOf("1 3:1e99\n").find("value '1e99'"), std::string::npos);
}

TEST_F(LibsvmReaderTest, MissingAndEmptyFiles) {
  EXPECT_EQ(ReadLibsvmDataset((dir_ / "none").string()).status().code(), Code::kNotFound);
  EXPECT_NE(ErrorOf("# nothing\n\n").find("no examples"), std::string::npos);
}

// Lines in memory (a request to the serve executable) give what a file of
// them gives; a line without an example is an error there, not skipped.
TEST_F(LibsvmReaderTest, LinesInMemoryGiveWhatTheFileGives) {
  const std::vector<std::string> lines = {"+1 3:1 11:0.5 14:-2e-1", "-1\t5:1\t7:1 # a comment",
                                          "1 0:3\r", "0", "1.0 2:1"};
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  StatusOr<Dataset> from_file = ReadLibsvmDataset(Write(text));
  StatusOr<Dataset> from_lines = ParseLibsvmLines(lines);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ASSERT_TRUE(from_lines.ok()) << from_lines.status().ToString();
  ExpectSameDataset(*from_lines, *from_file);

  const Status comment = ParseLibsvmLines({"1 3:1", "# only a comment"}).status();
  EXPECT_EQ(comment.code(), Code::kInvalidArgument);
  EXPECT_NE(comment.message().find("line 2: holds no example"), std::string::npos)
      << comment.message();
  EXPECT_EQ(ParseLibsvmLines({"1 3:1", "0 4"}).status().message(),
            "line 2: token 2 '4': expected index:value");
  EXPECT_NE(ParseLibsvmLines({"1 3:1\n0 4:1"}).status().message().find("line 1: holds a newline"),
            std::string::npos);
  EXPECT_EQ(ParseLibsvmLines({}).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst
