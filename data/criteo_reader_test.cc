#include "data/criteo_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "data/testing/same_dataset.h"
namespace pst {
namespace {

namespace fs = std::filesystem;

// One log line: the label, 13 integer fields and 26 categorical ones (those
// not given are "a<field>" for categoricals and "" for integers).
std::string Line(const std::string& label, std::vector<std::string> ints,
                 std::vector<std::string> cats) {
  ints.resize(kCriteoIntegerFeatures);
  const size_t given = cats.size();
  cats.resize(kCriteoCategoricalFields);
  for (size_t f = given; f < cats.size(); ++f) cats[f] = "a" + std::to_string(f);
  std::string line = label;
  for (const std::string& x : ints) line += "\t" + x;
  for (const std::string& c : cats) line += "\t" + c;
  return line;
}

class CriteoReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("criteo_reader_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text, const std::string& name = "day_0") {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string WriteGzip(const std::string& text, const std::string& name = "day_0") {
    const std::string path = (dir_ / name).string();
    gzFile file = gzopen(path.c_str(), "wb1");
    EXPECT_NE(file, nullptr);
    EXPECT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(file), Z_OK);
    return path;
  }

  // The error message of reading `text`, which must fail with `code`.
  std::string ErrorOf(const std::string& text, Code code) {
    const Status status = ReadCriteoDataset(Write(text)).status();
    EXPECT_EQ(status.code(), code) << status.ToString();
    return status.message();
  }

  fs::path dir_;
};

TEST(CriteoKeyTest, IsPinned) {
  // Keys are stored in checkpoints: a change of the hash must be deliberate.
  // (Values from an independent Python implementation.)
  EXPECT_EQ(CriteoKey(0, "68fd1e64"), int64_t{-293622452090429438});
  EXPECT_EQ(CriteoKey(25, ""), int64_t{3697214276081733565});
  EXPECT_EQ(CriteoKey(3, ""), int64_t{1029542765246477388});
}

TEST(CriteoKeyTest, IsFieldAwareAndSpreadsSimilarStrings) {
  EXPECT_EQ(CriteoKey(4, "05db9164"), CriteoKey(4, "05db9164"));
  EXPECT_NE(CriteoKey(4, "05db9164"), CriteoKey(5, "05db9164"));
  EXPECT_NE(CriteoKey(4, ""), CriteoKey(5, ""));
  // Values 0..9999 of one field: no collisions, and the low 4 bits (a shard
  // index) spread evenly.
  std::set<int64_t> keys;
  std::vector<int> shards(16);
  for (int v = 0; v < 10000; ++v) {
    const int64_t key = CriteoKey(7, std::to_string(v));
    keys.insert(key);
    ++shards[static_cast<uint64_t>(key) & 15];
  }
  EXPECT_EQ(keys.size(), 10000u);
  for (int count : shards) EXPECT_NEAR(count, 625, 100);
}

TEST_F(CriteoReaderTest, ReadsLabelsDenseAndSparseFeatures) {
  const std::string text =
      Line("1", {"0", "3", "", "-2", "100"}, {"68fd1e64", "80e26c9b"}) + "\n" +
      Line("0", {"7", "", "", "", "", "", "", "", "", "", "", "", "12"}, {"", "zz not hex"}) + "\n";
  StatusOr<Dataset> dataset = ReadCriteoDataset(Write(text), CriteoOptions{false});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = *dataset;
  EXPECT_EQ(d.size, 2);
  EXPECT_EQ(d.num_classes, 2);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(d.feature_dim, 13);
  EXPECT_EQ(d.example_shape, InputShape(13));
  ASSERT_EQ(d.features.size(), 26u);
  // log(1 + x); empty and negative give 0.
  std::vector<float> expected(26, 0.0f);
  expected[1] = std::log1p(3.0f);
  expected[4] = std::log1p(100.0f);
  expected[13] = std::log1p(7.0f);
  expected[25] = std::log1p(12.0f);
  for (size_t j = 0; j < expected.size(); ++j) {
    EXPECT_FLOAT_EQ(d.features[j], expected[j]) << "feature " << j;
  }
  EXPECT_EQ(d.num_fields, 26);
  EXPECT_EQ(d.sparse_offsets, (std::vector<int64_t>{0, 26, 52}));
  ASSERT_EQ(d.sparse_keys.size(), 52u);
  ASSERT_EQ(d.sparse_fields.size(), 52u);
  EXPECT_EQ(d.sparse_values, std::vector<float>(52, 1.0f));
  for (int i = 0; i < 2; ++i) {
    for (int f = 0; f < 26; ++f) EXPECT_EQ(d.sparse_fields[26 * i + f], f);
  }
  EXPECT_EQ(d.sparse_keys[0], CriteoKey(0, "68fd1e64"));
  EXPECT_EQ(d.sparse_keys[1], CriteoKey(1, "80e26c9b"));
  EXPECT_EQ(d.sparse_keys[2], CriteoKey(2, "a2"));
  EXPECT_EQ(d.sparse_keys[26], CriteoKey(0, ""));  // field C1's missing key
  EXPECT_EQ(d.sparse_keys[27], CriteoKey(1, "zz not hex"));
  EXPECT_EQ(d.sparse_keys[25], d.sparse_keys[26 + 25]);  // "a25" on both lines
}

TEST(CriteoIntegerBucketTest, SmallCountsApartThenFourPerFactorOfE) {
  EXPECT_EQ(CriteoIntegerBucket("", 0), "");  // empty: not the bucket of 0
  EXPECT_EQ(CriteoIntegerBucket("0", 0), "0");
  EXPECT_EQ(CriteoIntegerBucket("-2", -2), "neg");
  std::vector<std::string> small;
  for (int x = 0; x <= 4; ++x) small.push_back(CriteoIntegerBucket(std::to_string(x), x));
  EXPECT_EQ(small, (std::vector<std::string>{"0", "2", "4", "5", "6"}));
  EXPECT_EQ(CriteoIntegerBucket("5", 5), CriteoIntegerBucket("6", 6));
  EXPECT_EQ(CriteoIntegerBucket("15", 15), CriteoIntegerBucket("19", 19));
  EXPECT_NE(CriteoIntegerBucket("19", 19), CriteoIntegerBucket("20", 20));
  EXPECT_EQ(CriteoIntegerBucket("1096", 1096), "28");
  EXPECT_EQ(CriteoIntegerBucket("1407", 1407), "28");
}

TEST_F(CriteoReaderTest, IntegersAreAlsoBucketedFieldsByDefault) {
  const std::string text =
      Line("1", {"0", "3", "", "-2", "100"}, {"68fd1e64"}) + "\n" + Line("0", {"7"}, {}) + "\n";
  StatusOr<Dataset> dataset = ReadCriteoDataset(Write(text));
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = *dataset;
  EXPECT_EQ(d.feature_dim, 13);  // the dense log(1 + x) stay
  EXPECT_FLOAT_EQ(d.features[1], std::log1p(3.0f));
  EXPECT_EQ(d.num_fields, kCriteoFieldsWithIntegers);
  EXPECT_EQ(d.sparse_offsets, (std::vector<int64_t>{0, 39, 78}));
  for (int i = 0; i < 2; ++i) {
    for (int f = 0; f < 39; ++f) EXPECT_EQ(d.sparse_fields[39 * i + f], f);
  }
  EXPECT_EQ(d.sparse_keys[0], CriteoKey(0, "68fd1e64"));
  EXPECT_EQ(d.sparse_keys[26], CriteoKey(26, "0"));       // I1 = 0
  EXPECT_EQ(d.sparse_keys[27], CriteoKey(27, "5"));       // I2 = 3
  EXPECT_EQ(d.sparse_keys[28], CriteoKey(28, ""));        // I3 empty
  EXPECT_EQ(d.sparse_keys[29], CriteoKey(29, "neg"));     // I4 = -2
  EXPECT_EQ(d.sparse_keys[30], CriteoKey(30, "18"));      // I5 = 100
  EXPECT_EQ(d.sparse_keys[39 + 26], CriteoKey(26, "8"));  // line 2's I1 = 7
  // Field-aware: the bucket of 0 in I1 and in I2 are two keys.
  EXPECT_NE(CriteoKey(26, "0"), CriteoKey(27, "0"));
}

TEST_F(CriteoReaderTest, GzipAndPlainReadAlikeWhateverTheName) {
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text += Line(std::to_string(i % 2), {std::to_string(i)}, {std::to_string(i * 7)}) + "\n";
  }
  StatusOr<Dataset> plain = ReadCriteoDataset(Write(text, "plain.gz"));
  StatusOr<Dataset> gzip = ReadCriteoDataset(WriteGzip(text, "compressed.txt"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(gzip.ok()) << gzip.status().ToString();
  EXPECT_EQ(gzip->size, 50);
  EXPECT_EQ(gzip->labels, plain->labels);
  EXPECT_EQ(gzip->features, plain->features);
  EXPECT_EQ(gzip->sparse_keys, plain->sparse_keys);
  EXPECT_EQ(gzip->sparse_offsets, plain->sparse_offsets);
}

TEST_F(CriteoReaderTest, CrlfBlankLinesAndNoFinalNewline) {
  const std::string text = "\r\n" + Line("1", {"5"}, {"x"}) + "\r\n\n" + Line("0", {}, {"y"});
  StatusOr<Dataset> dataset = ReadCriteoDataset(Write(text), CriteoOptions{false});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->size, 2);
  EXPECT_EQ(dataset->labels, (std::vector<int32_t>{1, 0}));
  // The "\r" is not part of the last field's value.
  EXPECT_EQ(dataset->sparse_keys[25], CriteoKey(25, "a25"));
  EXPECT_EQ(dataset->sparse_keys[26], CriteoKey(0, "y"));
}

TEST_F(CriteoReaderTest, ManyLinesAcrossReadChunks) {
  // About 12 MB: lines straddle the reader's 4 MB chunks, gzip's too.
  constexpr int kLines = 60000;
  std::string text;
  for (int i = 0; i < kLines; ++i) {
    std::vector<std::string> cats(26);
    for (int f = 0; f < 26; ++f) cats[f] = "v" + std::to_string(i * 26 + f) + "padpadpad";
    text += Line(std::to_string(i % 2), {std::to_string(i)}, cats) + "\n";
  }
  for (const std::string& path : {Write(text), WriteGzip(text, "gz")}) {
    StatusOr<Dataset> dataset = ReadCriteoDataset(path);
    ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
    ASSERT_EQ(dataset->size, kLines);
    ASSERT_EQ(dataset->sparse_keys.size(), size_t{39} * kLines);
    for (int i = 0; i < kLines; i += 997) {
      EXPECT_EQ(dataset->labels[i], i % 2);
      EXPECT_FLOAT_EQ(dataset->features[13 * i], std::log1p(static_cast<float>(i)));
      EXPECT_EQ(dataset->sparse_keys[39 * i + 5],
                CriteoKey(5, "v" + std::to_string(i * 26 + 5) + "padpadpad"));
      EXPECT_EQ(dataset->sparse_keys[39 * i + 26], CriteoKey(26, CriteoIntegerBucket("1", i)));
    }
  }
}

TEST_F(CriteoReaderTest, WrongFieldCountNamesTheLine) {
  const std::string good = Line("0", {}, {});
  std::string message = ErrorOf(good + "\n\n" + good + "\tx\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("day_0:3: line has 41 tab-separated fields, expected 40"),
            std::string::npos)
      << message;
  // Kaggle's test.txt has no label column.
  message = ErrorOf(good.substr(2) + "\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("day_0:1: line has 39 tab-separated fields"), std::string::npos)
      << message;
  EXPECT_NE(message.find("without labels"), std::string::npos) << message;
}

TEST_F(CriteoReaderTest, BadLabelNamesLineAndField) {
  const std::string message =
      ErrorOf(Line("1", {}, {}) + "\n" + Line("2", {}, {}) + "\n", Code::kInvalidArgument);
  EXPECT_NE(message.find("day_0:2: column 1 (label): '2' is not 0 or 1"), std::string::npos)
      << message;
  EXPECT_NE(ErrorOf(Line("", {}, {}), Code::kInvalidArgument).find("(label): ''"),
            std::string::npos);
}

TEST_F(CriteoReaderTest, NonIntegerFeatureNamesLineAndField) {
  std::vector<std::string> ints(13);
  ints[6] = "abc";
  std::string message = ErrorOf(Line("0", ints, {}), Code::kInvalidArgument);
  EXPECT_NE(message.find("day_0:1: column 8 (I7): 'abc' is not a 64-bit integer"),
            std::string::npos)
      << message;
  ints[6] = "1.5";
  EXPECT_NE(ErrorOf(Line("0", ints, {}), Code::kInvalidArgument).find("(I7): '1.5'"),
            std::string::npos);
  ints[6] = "99999999999999999999";
  EXPECT_NE(ErrorOf(Line("0", ints, {}), Code::kInvalidArgument).find("(I7)"), std::string::npos);
  ints[6] = " 3";
  EXPECT_NE(ErrorOf(Line("0", ints, {}), Code::kInvalidArgument).find("(I7): ' 3'"),
            std::string::npos);
}

TEST_F(CriteoReaderTest, MissingEmptyAndTruncatedFiles) {
  EXPECT_EQ(ReadCriteoDataset((dir_ / "none").string()).status().code(), Code::kNotFound);
  EXPECT_NE(ErrorOf("\n\n", Code::kInvalidArgument).find("no examples"), std::string::npos);
  std::string text;
  for (int i = 0; i < 2000; ++i) text += Line("1", {std::to_string(i)}, {}) + "\n";
  const std::string path = WriteGzip(text);
  fs::resize_file(path, fs::file_size(path) / 2);
  const Status status = ReadCriteoDataset(path).status();
  EXPECT_EQ(status.code(), Code::kDataLoss) << status.ToString();
  EXPECT_NE(status.message().find("gzip stream ends early"), std::string::npos) << status.message();
}

// Lines in memory (a request to the serve executable) give what a file of
// them gives, with either option.
TEST_F(CriteoReaderTest, LinesInMemoryGiveWhatTheFileGives) {
  const std::vector<std::string> lines = {
      Line("1", {"0", "3", "", "-2", "100"}, {"68fd1e64", "80e26c9b"}),
      Line("0", {"7", "", "", "", "", "", "", "", "", "", "", "", "12"}, {"", "zz not hex"}),
      Line("0", {"5"}, {}) + "\r"};
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  const std::string path = Write(text);
  for (const bool integer_fields : {false, true}) {
    StatusOr<Dataset> from_file = ReadCriteoDataset(path, CriteoOptions{integer_fields});
    StatusOr<Dataset> from_lines = ParseCriteoLines(lines, CriteoOptions{integer_fields});
    ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
    ASSERT_TRUE(from_lines.ok()) << from_lines.status().ToString();
    ExpectSameDataset(*from_lines, *from_file);
  }
}

TEST_F(CriteoReaderTest, LinesInMemoryErrorsNameTheLine) {
  std::vector<std::string> ints(13);
  ints[6] = "abc";
  const Status bad = ParseCriteoLines({Line("0", {}, {}), Line("1", ints, {})}).status();
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.message(), "line 2: column 8 (I7): 'abc' is not a 64-bit integer");
  const Status empty = ParseCriteoLines({Line("0", {}, {}), ""}).status();
  EXPECT_EQ(empty.code(), Code::kInvalidArgument);
  EXPECT_NE(empty.message().find("line 2: holds no example"), std::string::npos) << empty.message();
  const Status fields = ParseCriteoLines({"1\t2"}).status();
  EXPECT_NE(fields.message().find("line 1: line has 2 tab-separated fields"), std::string::npos)
      << fields.message();
}

}  // namespace
}  // namespace pst
