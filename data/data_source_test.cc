#include "data/data_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/criteo_reader.h"
#include "data/feature_columns.h"
#include "data/libffm_reader.h"
#include "data/testing/same_dataset.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

class DataSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("data_source_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // `n` criteo lines; line i has I1 = i, C1 = "c<i>" and label i % 2.
  std::string Criteo(const std::string& name, int n) {
    std::string text;
    for (int i = 0; i < n; ++i) {
      text += std::to_string(i % 2) + "\t" + std::to_string(i) + std::string(12, '\t');
      text += "\tc" + std::to_string(i);
      for (int f = 1; f < kCriteoCategoricalFields; ++f) text += "\tv" + std::to_string(f);
      text += "\n";
    }
    return Write(name, text);
  }

  fs::path dir_;
};

TEST_F(DataSourceTest, FormatsIncludeTheSparseOnes) {
  const std::vector<std::string> formats = DataFormats();
  for (const char* name : {"criteo", "libsvm", "libffm", "csv", "mnist", "records"}) {
    EXPECT_NE(std::find(formats.begin(), formats.end(), name), formats.end()) << name;
  }
}

TEST_F(DataSourceTest, CriteoSplitsKeepTheirSparseEntries) {
  DataOptions o;
  o.format = "criteo";
  o.train_file = Criteo("train.txt", 100);
  o.test_file = Criteo("test.txt", 30);
  o.validation_examples = 20;
  o.normalize = true;
  StatusOr<DataSplits> splits = LoadData(o, /*with_test=*/true);
  ASSERT_TRUE(splits.ok()) << splits.status().ToString();
  EXPECT_EQ(splits->train.size, 80);
  EXPECT_EQ(splits->validation.size, 20);
  EXPECT_EQ(splits->test.size, 30);
  EXPECT_EQ(splits->test.num_classes, 2);
  for (const Dataset* d : {&splits->train, &splits->validation, &splits->test}) {
    EXPECT_EQ(d->num_fields, 39);  // with the integers' buckets
    ASSERT_EQ(d->sparse_offsets.size(), static_cast<size_t>(d->size + 1));
    ASSERT_EQ(d->sparse_keys.size(), static_cast<size_t>(39 * d->size));
    // Standardization moved the dense features only: the weights are still 1.
    EXPECT_EQ(d->sparse_values, std::vector<float>(d->sparse_keys.size(), 1.0f));
  }
  // Each example's C1 key still matches its label (line i: "c<i>", i % 2).
  ASSERT_TRUE(splits->standardization.has_value());
  const Dataset& v = splits->validation;
  const float mean = splits->standardization->mean[0], scale = splits->standardization->scale[0];
  for (int64_t k = 0; k < v.size; ++k) {
    const float log1p_i = v.features[13 * k] / scale + mean;
    const int i = static_cast<int>(std::lround(std::expm1(log1p_i)));
    EXPECT_EQ(v.sparse_keys[39 * k], CriteoKey(0, "c" + std::to_string(i)));
    EXPECT_EQ(v.labels[k], i % 2);
  }
  o.criteo_integer_fields = false;
  StatusOr<DataSplits> without = LoadData(o, /*with_test=*/true);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(without->test.num_fields, 26);
  EXPECT_EQ(without->test.sparse_keys.size(), static_cast<size_t>(26 * without->test.size));
}

TEST_F(DataSourceTest, LibsvmLoadsAndNormalizesWithoutDenseFeatures) {
  DataOptions o;
  o.format = "libsvm";
  o.train_file = Write("train.svm", "+1 1:1 3:0.5\n-1 2:1\n1 4:2\n-1\n");
  o.test_file = Write("test.svm", "0 1:1\n");
  o.normalize = true;
  o.validation_examples = 1;
  StatusOr<DataSplits> splits = LoadData(o, /*with_test=*/true);
  ASSERT_TRUE(splits.ok()) << splits.status().ToString();
  EXPECT_EQ(splits->train.feature_dim, 0);
  EXPECT_EQ(splits->train.size + splits->validation.size, 4);
  EXPECT_EQ(splits->train.sparse_keys.size() + splits->validation.sparse_keys.size(), 4u);
  EXPECT_EQ(splits->test.sparse_values, (std::vector<float>{1.0f}));
  StatusOr<Dataset> test = LoadTestSet(o, 2);
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->sparse_keys, (std::vector<int64_t>{1}));
}

// The training and the test file reach different fields: both get the
// larger count (predict: at least the model's).
TEST_F(DataSourceTest, LibffmSplitsTakeTheFieldsEitherFileReaches) {
  DataOptions o;
  o.format = "libffm";
  o.train_file = Write("train.ffm", "1 0:1:1 2:5:1\n0 1:2:1\n1 0:3:1\n");
  o.test_file = Write("test.ffm", "0 0:1:1 6:9:0.5\n");
  o.validation_examples = 1;
  StatusOr<DataSplits> splits = LoadData(o, /*with_test=*/true);
  ASSERT_TRUE(splits.ok()) << splits.status().ToString();
  for (const Dataset* d : {&splits->train, &splits->validation, &splits->test}) {
    EXPECT_EQ(d->num_fields, 7);
  }
  EXPECT_EQ(splits->test.sparse_keys, (std::vector<int64_t>{LibffmKey(0, 1), LibffmKey(6, 9)}));
  o.test_file = Write("small.ffm", "1 1:1:1\n");
  o.min_fields = 4;
  StatusOr<Dataset> test = LoadTestSet(o, 2);
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->num_fields, 4);
}

// --features: every split is what the columns make of it.
TEST_F(DataSourceTest, FeatureColumnsTransformEverySplit) {
  DataOptions o;
  o.format = "libffm";
  o.train_file = Write("train.ffm", "1 0:1:1 2:5:1 2:6:1\n0 1:2:1\n1 0:3:1\n0 2:7:2\n");
  o.test_file = Write("test.ffm", "0 0:1:1 2:5:0.5\n");
  o.validation_examples = 1;
  StatusOr<FeatureColumns> fc = ParseFeatureColumns(
      "user categorical 0 buckets=10\n"
      "items multi_hot 2 buckets=20 combiner=mean weighted table=items\n"
      "candidate categorical 1 buckets=20 table=items\n",
      "ffm.features", "libffm");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  o.features = *fc;
  StatusOr<DataSplits> splits = LoadData(o, /*with_test=*/true);
  ASSERT_TRUE(splits.ok()) << splits.status().ToString();
  for (const Dataset* d : {&splits->train, &splits->validation, &splits->test}) {
    EXPECT_EQ(d->num_fields, 3);
    EXPECT_EQ(d->feature_dim, 0);
    for (int64_t key : d->sparse_keys) {
      EXPECT_GE(key, 0);
      EXPECT_LT(key, 30);
    }
  }
  EXPECT_EQ(splits->train.size + splits->validation.size, 4);
  // The ids are the keys: user 1 (field 0) in table user [0, 10), item 5
  // (field 2) in table items [10, 30).
  const int64_t user1 = static_cast<int64_t>(TableKey("user", 1) % 10);
  const int64_t item5 = 10 + static_cast<int64_t>(TableKey("items", 5) % 20);
  EXPECT_EQ(splits->test.sparse_keys, (std::vector<int64_t>{user1, item5}));
  EXPECT_EQ(splits->test.sparse_values, (std::vector<float>{1, 0.5f}));
  StatusOr<Dataset> test = LoadTestSet(o, 2);
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->sparse_keys, splits->test.sparse_keys);
}

// Lines in memory, as the serve executable gets them, give what LoadTestSet
// gives for a file of them: the same reader and the same feature columns.
TEST_F(DataSourceTest, TestLinesGiveWhatTheTestFileGives) {
  DataOptions o;
  o.format = "libffm";
  const std::vector<std::string> lines = {"0 0:1:1 2:5:0.5", "1 1:4:1 2:6:1 2:5:1"};
  o.test_file = Write("test.ffm", lines[0] + "\n" + lines[1] + "\n");
  o.min_fields = 5;
  for (const bool with_features : {false, true}) {
    if (with_features) {
      o.features = ParseFeatureColumns(
                       "user categorical 0 buckets=10\n"
                       "items multi_hot 2 buckets=20 combiner=mean weighted\n",
                       "ffm.features", "libffm")
                       .value();
    }
    StatusOr<Dataset> from_file = LoadTestSet(o, 2);
    StatusOr<Dataset> from_lines = ParseTestLines(o, lines, 2);
    ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
    ASSERT_TRUE(from_lines.ok()) << from_lines.status().ToString();
    ExpectSameDataset(*from_lines, *from_file);
    EXPECT_EQ(from_lines->num_fields, with_features ? 2 : 5);
  }
  o.format = "csv";
  EXPECT_NE(ParseTestLines(o, lines, 2).status().message().find("read from files only"),
            std::string::npos);
  o.format = "criteo";
  EXPECT_NE(ParseTestLines(o, {"1\t2"}, 2).status().message().find("line 1:"), std::string::npos);
  EXPECT_EQ(ParseTestLines(o, lines, 3).status().code(), Code::kInvalidArgument);
}

TEST_F(DataSourceTest, SparseFormatsNeedFilesAndTwoClasses) {
  DataOptions o;
  o.format = "criteo";
  EXPECT_NE(LoadData(o, false).status().message().find("criteo data needs a training file"),
            std::string::npos);
  o.train_file = Criteo("train.txt", 10);
  o.num_classes = 3;
  const Status status = LoadData(o, false).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("has 2 classes"), std::string::npos) << status.message();
  o.format = "libsvm";
  o.num_classes = 0;
  o.train_file = "";
  EXPECT_NE(LoadData(o, false).status().message().find("libsvm data needs a training file"),
            std::string::npos);
}

}  // namespace
}  // namespace pst
