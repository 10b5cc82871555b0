#include "job/model_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/tensor_file.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("model_file_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a `name` model for `input` and `classes` with recognisable values.
  std::string Write(const std::string& name, const InputShape& input, int classes,
                    bool standardized) {
    Job job;
    job.model = name;
    job.input = input;
    job.num_classes = classes;
    if (standardized) {
      job.data.standardization = Standardization{std::vector<float>(input.size(), 2.0f),
                                                 std::vector<float>(input.size(), 0.5f)};
    }
    std::unique_ptr<Model> model = MakeModel(name, input, classes).value();
    params_.clear();
    for (const VariableSpec& spec : model->variables()) {
      Tensor t(DType::kFloat32, spec.shape);
      for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = 0.001f * (i % 97);
      params_.push_back(t);
    }
    const std::string path = (dir_ / "model.bin").string();
    EXPECT_TRUE(WriteModelFile(path, job, *model, params_).ok());
    return path;
  }

  fs::path dir_;
  std::vector<Tensor> params_;
};

TEST_F(ModelFileTest, RoundTripRecordsWhatRebuildingTheModelNeeds) {
  for (const std::string name : {"mlp", "mlp_relu", "wide_mlp"}) {
    StatusOr<TrainedModel> read = ReadModelFile(Write(name, 20, 3, /*standardized=*/true));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->model, name);  // told apart by their variables alone
    EXPECT_EQ(read->input, InputShape(20));
    EXPECT_EQ(read->num_classes, 3);
    ASSERT_TRUE(read->standardization.has_value());
    EXPECT_EQ(read->standardization->mean, std::vector<float>(20, 2.0f));
    ASSERT_EQ(read->params.size(), params_.size());
    for (size_t i = 0; i < params_.size(); ++i) {
      EXPECT_EQ(read->params[i].shape(), params_[i].shape());
      EXPECT_EQ(0, std::memcmp(read->params[i].data(), params_[i].data(),
                               params_[i].num_elements() * sizeof(float)));
    }
  }
  StatusOr<TrainedModel> cnn = ReadModelFile(Write("cnn", InputShape({8, 8, 3}), 4, false));
  ASSERT_TRUE(cnn.ok()) << cnn.status().ToString();
  EXPECT_EQ(cnn->model, "cnn");
  EXPECT_EQ(cnn->input, InputShape({8, 8, 3}));
  EXPECT_FALSE(cnn->standardization.has_value());
}

TEST_F(ModelFileTest, ASpecModelCarriesItsSpec) {
  const std::string name = SpecModelName("dense 7 relu\ndense classes\n");
  StatusOr<TrainedModel> read = ReadModelFile(Write(name, 20, 3, false));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->model, name);
}

TEST_F(ModelFileTest, AFileWithoutModelEntriesIsRefusedClearly) {
  const std::string path = (dir_ / "old.bin").string();
  Tensor w(DType::kFloat32, {2});
  ASSERT_TRUE(WriteTensorFile(path, {{"dense0/weights", w}}).ok());
  const Status s = ReadModelFile(path).status();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("no @model/version: not a model file, or one written by pstrain 0.5 "
                             "or older"),
            std::string::npos)
      << s.message();
}

TEST_F(ModelFileTest, ACorruptFileIsDataLoss) {
  const std::string path = Write("mlp", 20, 3, false);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  EXPECT_EQ(ReadModelFile(path).status().code(), Code::kDataLoss);
}

}  // namespace
}  // namespace pst
