#include "data/feature_columns.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "data/criteo_reader.h"

namespace pst {
namespace {

StatusOr<FeatureColumns> Parse(const std::string& text, const std::string& format = "criteo") {
  return ParseFeatureColumns(text, "f.features", format);
}

// The message of a file that must be refused.
std::string ErrorOf(const std::string& text, const std::string& format = "criteo") {
  const Status status = Parse(text, format).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << text;
  return status.message();
}

#define EXPECT_HAS(message, part) \
  EXPECT_NE((message).find(part), std::string::npos) << (message) << "\n  lacks: " << (part)

// A criteo-shaped raw Dataset: 2 examples, dense features x (as log1p),
// entries (key, field, value) per example.
struct RawExample {
  std::vector<double> x;  // the integers before log1p
  std::vector<std::tuple<int64_t, int32_t, float>> entries;
};

Dataset Raw(const std::vector<RawExample>& examples, int64_t dense, int fields) {
  Dataset d;
  d.size = static_cast<int64_t>(examples.size());
  d.feature_dim = dense;
  d.example_shape = InputShape(dense);
  d.num_classes = 2;
  d.num_fields = fields;
  d.sparse_offsets = {0};
  for (size_t i = 0; i < examples.size(); ++i) {
    d.labels.push_back(static_cast<int32_t>(i % 2));
    for (int64_t j = 0; j < dense; ++j) {
      d.features.push_back(static_cast<float>(std::log1p(examples[i].x.at(j))));
    }
    for (const auto& [key, field, value] : examples[i].entries) {
      d.sparse_keys.push_back(key);
      d.sparse_fields.push_back(field);
      d.sparse_values.push_back(value);
    }
    d.sparse_offsets.push_back(static_cast<int64_t>(d.sparse_keys.size()));
  }
  return d;
}

TEST(FeatureColumnsTest, ParsesEveryKindAndTheSummary) {
  StatusOr<FeatureColumns> fc = Parse(
      "# name  kind  source  options\n"
      "dim 16\n"
      "C1   categorical C1 buckets=100 table=shared   # a comment\n"
      "I1   numeric     I1 log1p\n"
      "I2b  numeric     I2 bucketize=0,1,2,5,10,100\n"
      "C2   multi_hot   C2 combiner=sqrtn max_length=3 weighted buckets=100 table=shared\n"
      "I3   numeric     I3\n"
      "C3   categorical C3 buckets=50 dim=16\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  ASSERT_EQ(fc->columns.size(), 6u);
  EXPECT_EQ(fc->columns[2].edges, (std::vector<double>{0, 1, 2, 5, 10, 100}));
  EXPECT_EQ(fc->columns[3].max_length, 3);
  EXPECT_TRUE(fc->columns[3].weighted);
  const FeatureSummary& s = fc->summary;
  EXPECT_EQ(s.dense_features, 2);
  EXPECT_EQ(s.dense_names, (std::vector<std::string>{"I1", "I3"}));
  EXPECT_EQ(s.num_fields, 4);
  EXPECT_EQ(s.field_names, (std::vector<std::string>{"C1", "I2b", "C2", "C3"}));
  EXPECT_EQ(s.field_combiners,
            (std::vector<FieldCombiner>{FieldCombiner::kDefault, FieldCombiner::kDefault,
                                        FieldCombiner::kSqrtN, FieldCombiner::kDefault}));
  EXPECT_EQ(s.embedding_dim, 16);
  // Tables in order of their first column: shared [0, 100), I2b [100, 107), C3 [107, 157).
  ASSERT_EQ(fc->tables.size(), 3u);
  EXPECT_EQ(fc->tables[0].name, "shared");
  EXPECT_EQ(fc->tables[0].offset, 0);
  EXPECT_EQ(fc->tables[0].rows, 100);
  EXPECT_EQ(fc->tables[1].name, "I2b");
  EXPECT_TRUE(fc->tables[1].identity);
  EXPECT_EQ(fc->tables[1].offset, 100);
  EXPECT_EQ(fc->tables[1].rows, 7);
  EXPECT_EQ(fc->tables[2].offset, 107);
  EXPECT_EQ(s.table_rows, 157);
  EXPECT_EQ(s.min_count, 0);
}

TEST(FeatureColumnsTest, DynamicTablesAndMinCount) {
  StatusOr<FeatureColumns> fc = Parse(
      "C1 categorical C1 min_count=3\n"
      "C2 multi_hot C2 buckets=0 min_count=3 combiner=mean\n"
      "I2b numeric I2 bucketize=1,10\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  EXPECT_EQ(fc->summary.table_rows, 0);
  EXPECT_EQ(fc->summary.min_count, 3);
  EXPECT_EQ(fc->summary.embedding_dim, 0);
  for (const FeatureTable& t : fc->tables) {
    EXPECT_EQ(t.rows, 0) << t.name;
    EXPECT_FALSE(t.identity) << t.name;
  }
}

TEST(FeatureColumnsTest, SourcesOfEachFormat) {
  EXPECT_TRUE(Parse("a categorical 0\nb multi_hot 27\n", "libffm").ok());
  EXPECT_TRUE(Parse("a multi_hot 0 weighted\n", "libsvm").ok());
  EXPECT_HAS(ErrorOf("a categorical 1\n", "libsvm"),
             "f.features:1: column a: unknown source '1': libsvm data has one field, 0");
  EXPECT_HAS(ErrorOf("a categorical C1\n", "libffm"), "unknown source 'C1': libffm's are field");
  EXPECT_HAS(ErrorOf("a categorical -1\n", "libffm"), "unknown source '-1'");
  EXPECT_HAS(ErrorOf("x categorical C1\ny categorical C27\n"),
             "f.features:2: column y: unknown source 'C27': criteo's are I1..I13 and C1..C26");
  EXPECT_HAS(ErrorOf("y categorical I14\n"), "unknown source 'I14'");
  EXPECT_HAS(ErrorOf("y categorical I1\n"), "column y: a categorical column takes a sparse source");
  EXPECT_HAS(ErrorOf("c categorical C1\ny numeric C1\n"),
             "f.features:2: column y: a numeric column takes a dense source");
  EXPECT_HAS(ErrorOf("a numeric 0\n", "libffm"), "a numeric column takes a dense source");
  EXPECT_EQ(Parse("a categorical 0\n", "csv").status().code(), Code::kInvalidArgument);
}

TEST(FeatureColumnsTest, BadFilesNameTheFileLineAndColumn) {
  EXPECT_HAS(ErrorOf("c categorical C1\n\nc2 sparse C2\n"),
             "f.features:3: column c2: unknown kind 'sparse': categorical, multi_hot or numeric");
  EXPECT_HAS(ErrorOf("c categorical C1\nc multi_hot C2\n"),
             "f.features:2: column c: duplicate name (first on line 1)");
  EXPECT_HAS(ErrorOf("c categorical\n"), "f.features:1: expected 'NAME KIND SOURCE [options]'");
  EXPECT_HAS(ErrorOf("c categorical C1 buckets=1e3\n"),
             "f.features:1: column c: bad number in 'buckets=1e3'");
  EXPECT_HAS(ErrorOf("c categorical C1 buckets=-1\n"), "bad number in 'buckets=-1'");
  EXPECT_HAS(ErrorOf("c categorical C1 dim=0\n"), "bad number in 'dim=0'");
  EXPECT_HAS(ErrorOf("c categorical C1 min_count=0\n"), "bad number in 'min_count=0'");
  EXPECT_HAS(ErrorOf("dim x\nc categorical C1\n"), "f.features:1: bad number");
  EXPECT_HAS(ErrorOf("dim 8\ndim 8\nc categorical C1\n"), "f.features:2: a second dim line");
  EXPECT_HAS(ErrorOf("c categorical C1\ni numeric I2 bucketize=0,5,5\n"),
             "f.features:2: column i: bad edges '0,5,5': they must be strictly increasing");
  EXPECT_HAS(ErrorOf("i numeric I2 bucketize=3,1\n"), "strictly increasing");
  EXPECT_HAS(ErrorOf("i numeric I2 bucketize=1,inf\n"), "'inf' is not a finite number");
  EXPECT_HAS(ErrorOf("i numeric I2 bucketize=1,x\n"), "'x' is not a finite number");
  EXPECT_HAS(ErrorOf("i numeric I2 bucketize=\n"), "bad edges ''");
  EXPECT_HAS(ErrorOf("i numeric I2 log1p bucketize=1\n"), "give log1p or bucketize, not both");
  EXPECT_HAS(ErrorOf("c categorical C1\ni numeric I2 buckets=5\n"),
             "column i: 'buckets=5' is for embedded columns");
  EXPECT_HAS(ErrorOf("m multi_hot C1 combiner=max\n"),
             "column m: bad combiner 'max': sum, mean or sqrtn");
  EXPECT_HAS(ErrorOf("m multi_hot C1 max_length=0\n"),
             "column m: bad max_length '0': a whole number >= 1");
  EXPECT_HAS(ErrorOf("c categorical C1 combiner=sum\n"),
             "column c: unknown option 'combiner=sum' for a categorical column");
  EXPECT_HAS(ErrorOf("c categorical C1 weighted\n"), "unknown option 'weighted'");
  EXPECT_HAS(ErrorOf("c categorical C1 table=a/b\n"), "bad table name 'a/b'");
  EXPECT_HAS(ErrorOf("i numeric I1\n"), "f.features: no categorical, multi_hot or bucketized");
  EXPECT_HAS(ErrorOf("c categorical C1 buckets=5 min_count=2\n"),
             "min_count is for dynamic tables");
}

TEST(FeatureColumnsTest, FieldsOfDifferentDimsGetTheirDimsAndKeyRanges) {
  StatusOr<FeatureColumns> fc = Parse(
      "dim 8\n"
      "a categorical C1 buckets=10 dim=4\n"
      "b categorical C2 buckets=20\n"
      "c categorical C3 buckets=10 table=a dim=4\n"
      "d categorical C4 buckets=5 dim=16\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  const FeatureSummary& s = fc->summary;
  EXPECT_EQ(s.embedding_dim, 0);
  EXPECT_EQ(s.field_dims, (std::vector<int64_t>{4, 8, 4, 16}));
  // Tables a [0, 10), b [10, 30), d [30, 35); c is in a's.
  EXPECT_EQ(s.field_ranges, (std::vector<KeyRange>{{0, 10}, {10, 20}, {0, 10}, {30, 5}}));
  EXPECT_EQ(s.table_rows, 35);
  // A column without dim= takes the model's (0 here); dynamic tables have no ranges.
  StatusOr<FeatureColumns> dynamic = Parse("a categorical C1 dim=4\nb categorical C2\n");
  ASSERT_TRUE(dynamic.ok()) << dynamic.status().ToString();
  EXPECT_EQ(dynamic->summary.field_dims, (std::vector<int64_t>{4, 0}));
  EXPECT_TRUE(dynamic->summary.field_ranges.empty());
  // One dim for all: the summary's dim, no per-field dims.
  StatusOr<FeatureColumns> one = Parse("dim 8\na categorical C1\nb categorical C2 dim=8\n");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->summary.embedding_dim, 8);
  EXPECT_TRUE(one->summary.field_dims.empty());
}

TEST(FeatureColumnsTest, WhatTheModelsTakeIsChecked) {
  EXPECT_HAS(ErrorOf("a categorical C1 dim=8 table=t\nb categorical C2 dim=16 table=t\n"),
             "f.features:2: column b: dim 16 differs from column a's (line 1): 8; the columns "
             "of table 't' share its rows, so they have one dim");
  EXPECT_HAS(ErrorOf("dim 8\na categorical C1 table=t\nb categorical C2 dim=16 table=t\n"),
             "column b: dim 16");
  EXPECT_HAS(ErrorOf("a categorical C1 table=t\nb categorical C2 dim=16 table=t\n"),
             "dim 16 differs from column a's (line 1): the model's");
  EXPECT_HAS(ErrorOf("a categorical C1 buckets=10\nb categorical C2\n"),
             "f.features:2: column b: table 'b' is dynamic but table 'a' (column a, line 1) is "
             "hashed: the tables of a feature file are all hashed (buckets=N) or all dynamic");
  EXPECT_HAS(ErrorOf("a categorical C1\nb categorical C2 buckets=10\n"),
             "f.features:2: column b: table 'b' is hashed but table 'a'");
  EXPECT_HAS(ErrorOf("a categorical C1 buckets=10 table=t\nb categorical C2 buckets=20 table=t\n"),
             "f.features:2: column b: table 't' has buckets=10 (column a, line 1), not 20");
  EXPECT_HAS(ErrorOf("a categorical C1 buckets=10 table=t\nb categorical C2 table=t\n"),
             "column b: table 't' has buckets=10 (column a, line 1): every column of a table");
  EXPECT_HAS(ErrorOf("a categorical C1 min_count=2\nb categorical C2 min_count=3\n"),
             "f.features:2: column b: min_count=3 differs from column a's (line 1)");
}

TEST(FeatureColumnsTest, TransformsEachKind) {
  StatusOr<FeatureColumns> fc = Parse(
      "C1   categorical C1 buckets=100 table=shared\n"
      "I1   numeric     I1\n"
      "I2b  numeric     I2 bucketize=0,1,2,5,10,100\n"
      "C2   multi_hot   C2 combiner=mean max_length=2 weighted buckets=100 table=shared\n"
      "C3   multi_hot   C3 buckets=50\n"
      "C1b  categorical C1 buckets=50 table=C3\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  const Dataset raw = Raw(
      {
          // C1 twice (categorical keeps the first), C2 three times (max_length 2), C3 once.
          {{3, 10, 7}, {{7, 0, 1}, {9, 1, 0.5f}, {8, 0, 1}, {11, 1, 2}, {12, 1, 3}, {7, 2, 1}}},
          // No C1, x2 = 99: bucket 5 (edges <= 99: 0,1,2,5,10); C3 = key 9 twice.
          {{0, 99, 7}, {{9, 2, 4}, {9, 2, 5}}},
      },
      /*dense=*/3, /*fields=*/3);
  StatusOr<Dataset> out = ApplyFeatureColumns(*fc, raw);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->size, 2);
  EXPECT_EQ(out->labels, raw.labels);
  EXPECT_EQ(out->num_classes, 2);
  EXPECT_EQ(out->feature_dim, 1);
  EXPECT_EQ(out->example_shape, InputShape(1));
  EXPECT_EQ(out->features, (std::vector<float>{raw.features[0], raw.features[3]}));
  EXPECT_EQ(out->num_fields, 5);
  auto shared = [](int64_t raw_key) {
    return static_cast<int64_t>(TableKey("shared", raw_key) % 100);
  };
  auto c3 = [](int64_t raw_key) {
    return 107 + static_cast<int64_t>(TableKey("C3", raw_key) % 50);
  };
  // Example 0: C1 (key 7), I2b (x = 10: bucket 5), C2 (9 and 11, weighted),
  // C3 (key 7), C1b (key 7 in table C3: the same row as C3's 7).
  // Example 1: I2b (bucket 5: 99 < 100), C3 (9 twice, weight 1), C1b none.
  EXPECT_EQ(out->sparse_offsets, (std::vector<int64_t>{0, 6, 9}));
  EXPECT_EQ(out->sparse_fields, (std::vector<int32_t>{0, 1, 2, 2, 3, 4, 1, 3, 3}));
  EXPECT_EQ(out->sparse_keys, (std::vector<int64_t>{shared(7), 100 + 5, shared(9), shared(11),
                                                    c3(7), c3(7), 100 + 5, c3(9), c3(9)}));
  EXPECT_EQ(out->sparse_values, (std::vector<float>{1, 1, 0.5f, 2, 1, 1, 1, 1, 1}));
  // Physical row ranges: shared [0, 100), I2b [100, 107), C3 [107, 157).
  EXPECT_EQ(fc->summary.table_rows, 157);
  for (int64_t key : out->sparse_keys) {
    EXPECT_GE(key, 0);
    EXPECT_LT(key, 157);
  }
  EXPECT_LT(shared(7), 100);
  // Equal raw keys in one table share a row; in different tables they do not.
  EXPECT_EQ(out->sparse_keys[4], out->sparse_keys[5]);
  EXPECT_NE(out->sparse_keys[0], out->sparse_keys[4]);
}

TEST(FeatureColumnsTest, BucketizeRecoversCriteosIntegers) {
  StatusOr<FeatureColumns> fc = Parse("b numeric I1 bucketize=0,1,2,5,10,100,1000\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  // x = 0 (also negative and missing in criteo), 1, 4, 5, 9, 10, 100, 999, 1000, 123456.
  const std::vector<double> xs = {0, 1, 4, 5, 9, 10, 100, 999, 1000, 123456};
  std::vector<RawExample> examples;
  for (double x : xs) examples.push_back({{x}, {}});
  StatusOr<Dataset> out = ApplyFeatureColumns(*fc, Raw(examples, 1, 26));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->sparse_keys, (std::vector<int64_t>{1, 2, 3, 4, 4, 5, 6, 6, 7, 7}));
}

TEST(FeatureColumnsTest, DynamicKeysAreTableAware) {
  StatusOr<FeatureColumns> fc = Parse(
      "a categorical C1\n"
      "b categorical C2 table=a\n"
      "c categorical C3\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  StatusOr<Dataset> out =
      ApplyFeatureColumns(*fc, Raw({{{}, {{5, 0, 1}, {5, 1, 1}, {5, 2, 1}}}}, 0, 3));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const int64_t a5 = static_cast<int64_t>(TableKey("a", 5));
  EXPECT_EQ(out->sparse_keys,
            (std::vector<int64_t>{a5, a5, static_cast<int64_t>(TableKey("c", 5))}));
  EXPECT_NE(a5, static_cast<int64_t>(TableKey("c", 5)));
}

TEST(FeatureColumnsTest, LibffmFieldsTheDataNeverReachesAreEmpty) {
  StatusOr<FeatureColumns> fc =
      Parse("a multi_hot 0 buckets=10\nz multi_hot 40 buckets=10\n", "libffm");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  StatusOr<Dataset> out = ApplyFeatureColumns(*fc, Raw({{{}, {{5, 0, 1}}}}, 0, 2));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->num_fields, 2);
  EXPECT_EQ(out->sparse_fields, (std::vector<int32_t>{0}));
}

TEST(FeatureColumnsTest, ASourceBeyondTheDataIsRefused) {
  StatusOr<FeatureColumns> fc = Parse("c categorical C1\ni numeric I5\n");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  const Status s = ApplyFeatureColumns(*fc, Raw({{{1, 2}, {}}}, 2, 1)).status();
  EXPECT_HAS(s.message(),
             "f.features:2: column i: source I5 is beyond the data's 2 dense features");
}

TEST(FeatureColumnsTest, ReadNamesAMissingFile) {
  const Status s = ReadFeatureColumns("/nonexistent/x.features", "criteo").status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_HAS(s.message(), "/nonexistent/x.features: cannot read the feature file");
}

TEST(FeatureColumnsTest, TableKeysAreStable) {
  // Keys are stored in checkpoints: they must never change.
  EXPECT_EQ(TableKey("shared", 42), 0x0431bc3d42fdf57eULL) << std::hex << TableKey("shared", 42);
  EXPECT_NE(TableKey("a", 1), TableKey("b", 1));
  EXPECT_NE(TableKey("a", 1), TableKey("a", 2));
}

// examples/criteo.features means what the run without --features does: 13
// log1p numerics (the reader's features as they are), 26 categorical fields
// in one shared table of 1,000,000 rows (the --embedding_rows default), and
// the 13 integers bucketized (--criteo_integer_fields), each in a table of
// its own of 88 buckets after the shared one.
TEST(FeatureColumnsTest, TheCriteoDefaultFileIsTodaysModel) {
  const char* root = std::getenv("PST_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "PST_SOURCE_DIR is not set (run through ctest)";
  StatusOr<FeatureColumns> fc =
      ReadFeatureColumns(std::string(root) + "/examples/criteo.features", "criteo");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  constexpr int64_t kShared = 1000000, kBuckets = 88;
  const FeatureSummary& s = fc->summary;
  EXPECT_EQ(s.dense_features, kCriteoIntegerFeatures);
  EXPECT_EQ(s.num_fields, kCriteoFieldsWithIntegers);
  EXPECT_EQ(s.table_rows, kShared + kCriteoIntegerFeatures * kBuckets);
  EXPECT_EQ(s.embedding_dim, 0);
  EXPECT_EQ(s.field_combiners, std::vector<FieldCombiner>(39, FieldCombiner::kDefault));
  EXPECT_EQ(s.field_names.front(), "C1");
  EXPECT_EQ(s.field_names.back(), "I13b");
  EXPECT_EQ(s.dense_names.back(), "I13");

  // Two criteo examples through the reader's layout (with --features it
  // leaves the integers to the file: 26 fields).
  std::vector<RawExample> examples(2);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < kCriteoIntegerFeatures; ++j) examples[i].x.push_back(i * 13 + j);
    for (int f = 0; f < kCriteoCategoricalFields; ++f) {
      examples[i].entries.emplace_back(CriteoKey(f, f == 3 ? "same" : "v" + std::to_string(i)), f,
                                       1.0f);
    }
  }
  const Dataset raw = Raw(examples, kCriteoIntegerFeatures, kCriteoCategoricalFields);
  StatusOr<Dataset> out = ApplyFeatureColumns(*fc, raw);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->feature_dim, raw.feature_dim);
  EXPECT_EQ(out->example_shape, raw.example_shape);
  EXPECT_EQ(out->features, raw.features);
  EXPECT_EQ(out->num_fields, 39);
  EXPECT_EQ(out->sparse_offsets, (std::vector<int64_t>{0, 39, 78}));
  for (int i = 0; i < 2; ++i) {
    for (int f = 0; f < 39; ++f) {
      const int64_t e = 39 * i + f;
      EXPECT_EQ(out->sparse_fields[e], f);
      if (f < 26) {
        EXPECT_EQ(out->sparse_keys[e],
                  static_cast<int64_t>(TableKey("shared", raw.sparse_keys[26 * i + f]) % kShared));
      } else {  // I(f - 25)'s bucket in its own table
        const int64_t offset = kShared + (f - 26) * kBuckets;
        EXPECT_GE(out->sparse_keys[e], offset);
        EXPECT_LT(out->sparse_keys[e], offset + kBuckets);
      }
    }
  }
  // The bucket of a count is the reader's: 0 -> the first, 1 the second,
  // 5 and 6 one bucket (CriteoIntegerBucket), 7 the next.
  EXPECT_EQ(out->sparse_keys[26], kShared);                          // I1 = 0
  EXPECT_EQ(out->sparse_keys[27], kShared + kBuckets + 1);           // I2 = 1
  EXPECT_EQ(out->sparse_keys[31], out->sparse_keys[32] - kBuckets);  // I6 = 5, I7 = 6
  EXPECT_EQ(out->sparse_keys[33], kShared + 7 * kBuckets + 6);       // I8 = 7
  // One string in one field: one row, as today; in another field: another.
  EXPECT_EQ(out->sparse_keys[3], out->sparse_keys[39 + 3]);
  EXPECT_NE(out->sparse_keys[1], out->sparse_keys[39 + 1]);
}

}  // namespace
}  // namespace pst
