#include "data/libffm_reader.h"

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

class LibffmReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("libffm_reader_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "ffm.txt").string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string ErrorOf(const std::string& text) {
    const Status status = ReadLibffmDataset(Write(text)).status();
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << status.ToString();
    return status.message();
  }

  fs::path dir_;
};

TEST_F(LibffmReaderTest, ReadsLabelsAndTriples) {
  const std::string text =
      "+1 0:3:1 2:11:0.5 2:14:-2e-1\n"
      "-1\t1:5:1\t0:7:1 # a comment\n"
      "\n"
      "# a comment line\n"
      "1 4:3:3\r\n"
      "0\n"
      "1.0 0:2:1";
  StatusOr<Dataset> dataset = ReadLibffmDataset(Write(text));
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = *dataset;
  EXPECT_EQ(d.size, 5);
  EXPECT_EQ(d.num_classes, 2);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{1, 0, 1, 0, 1}));
  EXPECT_EQ(d.feature_dim, 0);
  EXPECT_TRUE(d.features.empty());
  EXPECT_EQ(d.num_fields, 5);  // 1 + the largest field, 4
  EXPECT_EQ(d.sparse_offsets, (std::vector<int64_t>{0, 3, 5, 6, 6, 7}));
  EXPECT_EQ(d.sparse_keys, (std::vector<int64_t>{LibffmKey(0, 3), LibffmKey(2, 11),
                                                 LibffmKey(2, 14), LibffmKey(1, 5), LibffmKey(0, 7),
                                                 LibffmKey(4, 3), LibffmKey(0, 2)}));
  EXPECT_EQ(d.sparse_fields, (std::vector<int32_t>{0, 2, 2, 1, 0, 4, 0}));
  EXPECT_EQ(d.sparse_values, (std::vector<float>{1, 0.5f, -0.2f, 1, 1, 3, 1}));
}

TEST_F(LibffmReaderTest, KeysAreFieldAwareAndStable) {
  EXPECT_NE(LibffmKey(0, 3), LibffmKey(4, 3));
  EXPECT_NE(LibffmKey(0, 3), LibffmKey(0, 4));
  EXPECT_EQ(LibffmKey(0, 3), LibffmKey(0, 3));
  // Keys are stored in checkpoints: they must never change.
  EXPECT_EQ(LibffmKey(0, 0), LibffmKey(0, 0));
  EXPECT_EQ(static_cast<uint64_t>(LibffmKey(1, 42)), 0xc2f88d789782d784ULL)
      << std::hex << static_cast<uint64_t>(LibffmKey(1, 42));
}

TEST_F(LibffmReaderTest, KeysCanBeTheIdsThemselves) {
  StatusOr<Dataset> dataset = ReadLibffmDataset(Write("1 0:3:1 2:3:1 1:7:1\n"), false);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->sparse_keys, (std::vector<int64_t>{3, 3, 7}));
  EXPECT_EQ(dataset->sparse_fields, (std::vector<int32_t>{0, 2, 1}));
}

TEST_F(LibffmReaderTest, ReadsGzip) {
  const std::string text = "1 0:1:1 1:2:1\n0 1:9:2\n";
  const std::string path = (dir_ / "ffm.gz").string();
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  StatusOr<Dataset> dataset = ReadLibffmDataset(path);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->size, 2);
  EXPECT_EQ(dataset->num_fields, 2);
  EXPECT_EQ(dataset->sparse_keys.back(), LibffmKey(1, 9));
}

TEST_F(LibffmReaderTest, ExamplesWithoutEntriesHaveOneEmptyField) {
  StatusOr<Dataset> dataset = ReadLibffmDataset(Write("1\n0\n"));
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->num_fields, 1);
  EXPECT_EQ(dataset->sparse_offsets, (std::vector<int64_t>{0, 0, 0}));
}

TEST_F(LibffmReaderTest, BadLabelNamesFileAndLine) {
  for (const char* label : {"2", "-2", "0.5", "yes", "1:1:1"}) {
    const std::string message = ErrorOf("1 0:1:1\n" + std::string(label) + " 0:2:1\n");
    EXPECT_NE(message.find("ffm.txt:2: label '" + std::string(label) + "' is not 0, 1, -1 or +1"),
              std::string::npos)
        << message;
  }
}

TEST_F(LibffmReaderTest, MalformedTripleNamesFileLineAndToken) {
  std::string message = ErrorOf("1 0:1:1\n\n0 0:4:1 5:1\n");
  EXPECT_NE(message.find("ffm.txt:3: token 3 '5:1': expected field:id:value"), std::string::npos)
      << message;
  EXPECT_NE(ErrorOf("0 5\n").find("token 2 '5': expected field:id:value"), std::string::npos);
  message = ErrorOf("0 x:1:1\n");
  EXPECT_NE(message.find("ffm.txt:1: token 2 'x:1:1': field 'x' is not an integer in [0, 65535]"),
            std::string::npos)
      << message;
  EXPECT_NE(ErrorOf("0 -1:1:1\n").find("field '-1'"), std::string::npos);
  EXPECT_NE(ErrorOf("0 65536:1:1\n").find("field '65536'"), std::string::npos);
  message = ErrorOf("0 1:-3:1\n");
  EXPECT_NE(message.find("ffm.txt:1: token 2 '1:-3:1': id '-3' is not an integer >= 0"),
            std::string::npos)
      << message;
  EXPECT_NE(ErrorOf("0 1::1\n").find("id ''"), std::string::npos);
  message = ErrorOf("1 0:2:1 1:3:abc\n");
  EXPECT_NE(message.find("ffm.txt:1: token 3 '1:3:abc': value 'abc' is not a finite number"),
            std::string::npos)
      << message;
  EXPECT_NE(ErrorOf("1 1:3:\n").find("value ''"), std::string::npos);
  EXPECT_NE(ErrorOf("1 1:3:nan\n").find("value 'nan'"), std::string::npos);
  EXPECT_NE(ErrorOf("1 1:3:1:1\n").find("value '1:1'"), std::string::npos);
}

TEST_F(LibffmReaderTest, MissingAndEmptyFiles) {
  EXPECT_EQ(ReadLibffmDataset((dir_ / "none").string()).status().code(), Code::kNotFound);
  EXPECT_NE(ErrorOf("# nothing\n\n").find("no examples"), std::string::npos);
}

// Lines in memory (a request to the serve executable) give what a file of
// them gives, with field-aware keys or the ids themselves.
TEST_F(LibffmReaderTest, LinesInMemoryGiveWhatTheFileGives) {
  const std::vector<std::string> lines = {"1 0:1:1 2:5:1 2:6:0.5", "0 1:2:1 # a comment", "-1",
                                          "+1 3:7:2\r"};
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  const std::string path = Write(text);
  for (const bool field_aware : {true, false}) {
    StatusOr<Dataset> from_file = ReadLibffmDataset(path, field_aware);
    StatusOr<Dataset> from_lines = ParseLibffmLines(lines, field_aware);
    ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
    ASSERT_TRUE(from_lines.ok()) << from_lines.status().ToString();
    ExpectSameDataset(*from_lines, *from_file);
    EXPECT_EQ(from_lines->num_fields, 4);
  }
  EXPECT_EQ(ParseLibffmLines({"1"})->num_fields, 1);  // one empty field, as a file's
  EXPECT_EQ(ParseLibffmLines({"1 0:1:1", "0 1:x:1"}).status().message(),
            "line 2: token 2 '1:x:1': id 'x' is not an integer >= 0");
  EXPECT_NE(ParseLibffmLines({"  "}).status().message().find("line 1: holds no example"),
            std::string::npos);
}

}  // namespace
}  // namespace pst
