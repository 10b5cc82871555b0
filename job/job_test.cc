#include "job/job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "job/model_file.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

class JobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("job_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `rows` examples of `features` features, label i % classes.
  std::string WriteCsv(const std::string& name, int rows, int features, int classes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << "label";
    for (int j = 0; j < features; ++j) out << ",f" << j;
    out << "\n";
    for (int i = 0; i < rows; ++i) {
      out << i % classes;
      for (int j = 0; j < features; ++j) out << "," << (i * 7 + j) % 11;
      out << "\n";
    }
    return path;
  }

  JobOptions Csv(const std::string& train, const std::string& test) {
    JobOptions o;
    o.data.format = "csv";
    o.data.train_file = train;
    o.data.test_file = test;
    o.model = "mlp_relu";
    return o;
  }

  fs::path dir_;
};

TEST_F(JobTest, CsvJobTakesItsShapeAndClassesFromTheData) {
  JobOptions o = Csv(WriteCsv("train.csv", 300, 20, 3), WriteCsv("test.csv", 60, 20, 3));
  o.data.validation_examples = 50;
  o.data.normalize = true;
  StatusOr<Job> job = LoadJob(o, /*with_test=*/true);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->Describe(), "dataset=csv input=20 features classes=3 model=mlp_relu");
  EXPECT_EQ(job->data.train.size, 250);
  EXPECT_EQ(job->data.validation.size, 50);
  EXPECT_EQ(job->data.test.size, 60);
  // Standardized on the training split: its features have mean 0.
  double sum = 0;
  for (int64_t i = 0; i < job->data.train.size; ++i) sum += job->data.train.features[i * 20];
  EXPECT_NEAR(sum / job->data.train.size, 0.0, 1e-4);
}

TEST_F(JobTest, DataTheModelCannotTakeIsRefusedNamingBothSides) {
  JobOptions o = Csv(WriteCsv("train.csv", 30, 20, 3), WriteCsv("test.csv", 10, 20, 3));
  o.model = "cnn";
  const Status s = LoadJob(o, true).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("model 'cnn' takes an image"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("got 20 features"), std::string::npos) << s.message();
}

TEST_F(JobTest, ATestSetThatDoesNotFitTheTrainingSetIsRefused) {
  Status s =
      LoadJob(Csv(WriteCsv("a.csv", 30, 20, 3), WriteCsv("b.csv", 10, 19, 3)), true).status();
  EXPECT_NE(s.message().find("the test set's examples (19 features) differ from the training "
                             "set's (20 features)"),
            std::string::npos)
      << s.message();
  s = LoadJob(Csv(WriteCsv("c.csv", 30, 20, 3), WriteCsv("d.csv", 10, 20, 4)), true).status();
  EXPECT_NE(s.message().find("label 3 is outside [0, 3)"), std::string::npos) << s.message();
}

TEST_F(JobTest, UnknownFormatAndMissingFileFlagsAreClear) {
  JobOptions o;
  o.data.format = "parquet";
  EXPECT_NE(
      LoadJob(o, true).status().message().find(
          "unknown data format 'parquet'; known: criteo, csv, libffm, libsvm, mnist, records"),
      std::string::npos);
  o.data.format = "csv";
  EXPECT_NE(LoadJob(o, true).status().message().find("csv data needs a training file"),
            std::string::npos);
}

// A click job with --features: the data is what the columns make of it and
// the model config comes from the feature file (fields, dense features,
// tables, dim, combiners); model.bin keeps what predict needs to rebuild it.
TEST_F(JobTest, FeatureColumnsMakeTheDataAndTheClickModelConfig) {
  const std::string train = (dir_ / "train.ffm").string();
  const std::string test = (dir_ / "test.ffm").string();
  std::ofstream(train) << "1 0:1:1 2:5:1 2:6:1\n0 1:2:1\n1 0:3:1 1:4:1\n0 2:7:2\n";
  std::ofstream(test) << "0 0:1:1 2:5:0.5\n1 1:3:1\n";
  JobOptions o;
  o.model = "wide_deep";
  o.data.format = "libffm";
  o.data.train_file = train;
  o.data.test_file = test;
  StatusOr<FeatureColumns> fc = ParseFeatureColumns(
      "dim 4\n"
      "user categorical 0 buckets=10\n"
      "items multi_hot 2 buckets=20 combiner=sqrtn max_length=2 weighted table=items\n"
      "candidate categorical 1 buckets=20 table=items\n",
      "ffm.features", "libffm");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  o.data.features = *fc;
  StatusOr<Job> job = LoadJob(o, /*with_test=*/true);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_TRUE(job->click_model);
  EXPECT_EQ(job->num_fields, 3);
  EXPECT_EQ(job->table_rows, 30);  // --embedding_rows (1,000,000) is the file's business now
  EXPECT_EQ(job->input, InputShape(0));
  EXPECT_EQ(job->data.test.size, 2);
  EXPECT_NE(job->Describe().find(" fields=3 tables=fixed:30 features="), std::string::npos)
      << job->Describe();
  StatusOr<CtrModelConfig> config = JobClickModelConfig(*job);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->num_fields, 3);
  EXPECT_EQ(config->dense_features, 0);
  EXPECT_EQ(config->table_rows, 30);
  EXPECT_EQ(config->embedding_dim, 4);
  // wide_deep sums: the fields without a combiner of their own take its sum.
  EXPECT_EQ(config->field_combiners,
            (std::vector<Combiner>{Combiner::kSum, Combiner::kSqrtN, Combiner::kSum}));
  StatusOr<std::unique_ptr<Model>> model = MakeJobModel(*job);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (const EmbeddingTableSpec& t : (*model)->tables()) EXPECT_EQ(t.rows, 30) << t.name;

  // model.bin: the dim and combiners come back; predict's model is the same.
  std::vector<Tensor> params;
  for (const VariableSpec& v : (*model)->variables()) params.emplace_back(DType::kFloat32, v.shape);
  for (const EmbeddingTableSpec& t : (*model)->tables()) {
    params.emplace_back(DType::kFloat32, Shape{t.rows, t.dim});
  }
  const std::string path = (dir_ / "model.bin").string();
  ASSERT_TRUE(WriteModelFile(path, *job, **model, params).ok());
  StatusOr<TrainedModel> trained = ReadModelFile(path);
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  EXPECT_EQ(trained->embedding_dim, 4);
  EXPECT_EQ(trained->features_text, fc->text);
  EXPECT_EQ(trained->field_combiners, config->field_combiners);
  EXPECT_EQ(trained->num_fields, 3);
  EXPECT_EQ(trained->table_rows, 30);

  // Dynamic tables need a capacity; hashed ones refuse it.
  o.embedding_capacity = 1000;
  EXPECT_NE(LoadJob(o, true).status().message().find("the feature file's tables are hashed (30 "
                                                     "rows in all): --embedding_capacity is for "
                                                     "dynamic tables"),
            std::string::npos);
  fc = ParseFeatureColumns("user categorical 0 min_count=2\n", "f", "libffm");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  o.data.features = *fc;
  o.embedding_capacity = 0;
  EXPECT_NE(LoadJob(o, true).status().message().find("the feature file's tables are dynamic"),
            std::string::npos);
  o.embedding_capacity = 1000;
  job = LoadJob(o, true);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->table_rows, 0);
  EXPECT_EQ(JobClickModelConfig(*job)->field_combiners, std::vector<Combiner>{});
  o.model = "mlp";
  EXPECT_NE(LoadJob(o, true).status().message().find(
                "--features describes click data: it needs a click model"),
            std::string::npos);
}

// Columns of different dims: wide_deep gets a deep table per dim (model.bin
// keeps the dims and key ranges); fm, whose dot products need one dim,
// refuses the file naming two columns.
TEST_F(JobTest, FieldsOfDifferentDimsMakeATablePerDimOrAreRefusedByFm) {
  const std::string train = (dir_ / "train.ffm").string();
  std::ofstream(train) << "1 0:1:1 1:5:1 2:6:1\n0 1:2:1\n1 0:3:1 2:4:1\n0 2:7:2\n";
  JobOptions o;
  o.model = "wide_deep";  // dim 8
  o.data.format = "libffm";
  o.data.train_file = o.data.test_file = train;
  StatusOr<FeatureColumns> fc = ParseFeatureColumns(
      "user categorical 0 buckets=10 dim=4\n"
      "item categorical 1 buckets=20\n"
      "tag categorical 2 buckets=5 dim=4\n",
      "dims.features", "libffm");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  o.data.features = *fc;
  StatusOr<Job> job = LoadJob(o, true);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const CtrModelConfig config = JobClickModelConfig(*job).value();
  EXPECT_EQ(config.field_dims, (std::vector<int64_t>{4, 8, 4}));
  EXPECT_EQ(config.field_ranges, (std::vector<KeyRange>{{0, 10}, {10, 20}, {30, 5}}));
  StatusOr<std::unique_ptr<Model>> model = MakeJobModel(*job);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::vector<EmbeddingTableSpec>& tables = (*model)->tables();
  ASSERT_EQ(tables.size(), 3u);
  EXPECT_EQ(tables[0].name, "deep/embedding");
  EXPECT_EQ(tables[0].dim, 4);
  EXPECT_EQ(tables[0].rows, 15);  // user's 10 and tag's 5
  EXPECT_EQ(tables[2].name, "deep/embedding_dim8");
  EXPECT_EQ(tables[2].rows, 20);

  std::vector<Tensor> params;
  for (const VariableSpec& v : (*model)->variables()) params.emplace_back(DType::kFloat32, v.shape);
  for (const EmbeddingTableSpec& t : tables)
    params.emplace_back(DType::kFloat32, Shape{t.rows, t.dim});
  const std::string path = (dir_ / "model.bin").string();
  ASSERT_TRUE(WriteModelFile(path, *job, **model, params).ok());
  StatusOr<TrainedModel> trained = ReadModelFile(path);
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  EXPECT_EQ(trained->field_dims, config.field_dims);
  EXPECT_EQ(trained->field_ranges, config.field_ranges);
  StatusOr<std::unique_ptr<Model>> rebuilt = MakeTrainedModel(*trained);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_EQ((*rebuilt)->tables()[2].rows, 20);

  o.model = "fm";  // dim 16: item takes it, user and tag say 4
  EXPECT_NE(LoadJob(o, true).status().message().find(
                "the feature file's column item has dim 16 and column user 4: fm's pairwise dot "
                "products need one embedding dim for every field"),
            std::string::npos)
      << LoadJob(o, true).status().message();
}

// examples/criteo.features on criteo data: the same model as without it
// (its 13 bucketized integers have their own 88 rows each, past the shared
// table's, where the run without it hashes them into the shared table).
TEST_F(JobTest, TheCriteoFeatureFileMakesTodaysModel) {
  const char* root = std::getenv("PST_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "PST_SOURCE_DIR is not set (run through ctest)";
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += std::to_string(i % 2);
    for (int j = 0; j < 13; ++j) text += "\t" + std::to_string(i + j);
    for (int f = 0; f < 26; ++f) text += "\tv" + std::to_string((i + f) % 5);
    text += "\n";
  }
  const std::string file = (dir_ / "day.txt").string();
  std::ofstream(file) << text;
  JobOptions o;
  o.model = "wide_deep";
  o.data.format = "criteo";
  o.data.train_file = o.data.test_file = file;
  StatusOr<Job> plain = LoadJob(o, true);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  StatusOr<FeatureColumns> fc =
      ReadFeatureColumns(std::string(root) + "/examples/criteo.features", "criteo");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  o.data.features = *fc;
  StatusOr<Job> featured = LoadJob(o, true);
  ASSERT_TRUE(featured.ok()) << featured.status().ToString();
  EXPECT_EQ(featured->input, plain->input);
  EXPECT_EQ(featured->num_fields, plain->num_fields);
  EXPECT_EQ(plain->num_fields, 39);
  EXPECT_EQ(featured->table_rows, plain->table_rows + 13 * 88);
  EXPECT_EQ(featured->data.train.features, plain->data.train.features);
  const CtrModelConfig a = JobClickModelConfig(*plain).value();
  const CtrModelConfig b = JobClickModelConfig(*featured).value();
  EXPECT_EQ(a.dense_features, b.dense_features);
  EXPECT_EQ(a.num_fields, b.num_fields);
  EXPECT_EQ(a.embedding_dim, b.embedding_dim);
  EXPECT_EQ(b.table_rows, a.table_rows + 13 * 88);
  EXPECT_EQ(a.combiner, b.combiner);
  EXPECT_TRUE(b.field_combiners.empty());
  EXPECT_EQ(plain->Describe().find("features="), std::string::npos);
}

}  // namespace
}  // namespace pst
