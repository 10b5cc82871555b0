#include "job/job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
  EXPECT_NE(LoadJob(o, true).status().message().find(
                "unknown data format 'parquet'; known: criteo, csv, libsvm, mnist, records"),
            std::string::npos);
  o.data.format = "csv";
  EXPECT_NE(LoadJob(o, true).status().message().find("csv data needs a training file"),
            std::string::npos);
}

}  // namespace
}  // namespace pst
