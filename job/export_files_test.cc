#include "job/export_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/tensor_file.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

// A wide_deep click model on 13 dense features and 26 fields, tables of 50
// rows, with parameters k + element index / 1000 (k tells versions apart).
class ExportFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("export_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    job_.dataset = "criteo";
    job_.model = "wide_deep";
    job_.input = 13;
    job_.num_classes = 2;
    job_.click_model = true;
    job_.num_fields = 26;
    job_.table_rows = 50;
    model_ = MakeJobModel(job_).value();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<Tensor> Params(float k) const {
    std::vector<Tensor> params;
    for (const VariableSpec& v : model_->variables()) params.emplace_back(v.dtype, v.shape);
    for (const EmbeddingTableSpec& t : model_->tables()) {
      params.emplace_back(DType::kFloat32, Shape{job_.table_rows, t.dim});
    }
    for (Tensor& p : params) {
      for (int64_t i = 0; i < p.num_elements(); ++i) p.f32()[i] = k + i / 1000.0f;
    }
    return params;
  }
  void WriteBase(int64_t step, float k) {
    ASSERT_TRUE(
        WriteModelFile((dir_ / BaseFileName(step)).string(), job_, *model_, Params(k)).ok());
  }
  // A delta at `step` after `previous` of base `base`: every dense variable
  // at k, and row `row` of the first table (deep/embedding) at k.
  void WriteDelta(int64_t step, int64_t base, int64_t previous, float k, int64_t row) {
    const std::vector<Tensor> all = Params(k);
    NamedTensors dense;
    for (size_t i = 0; i < model_->variables().size(); ++i) {
      dense.emplace_back(model_->variables()[i].name, all[i]);
    }
    const EmbeddingTableSpec& table = model_->tables()[0];
    Tensor ids(DType::kInt64, {1});
    ids.i64()[0] = row;
    Tensor rows(DType::kFloat32, {1, table.dim});
    for (int64_t d = 0; d < table.dim; ++d) rows.f32()[d] = k;
    ASSERT_TRUE(WriteDeltaFile((dir_ / DeltaFileName(step)).string(), base, previous, dense,
                               {{table.name, ids, rows}})
                    .ok());
  }
  const Tensor& Table(const ExportedModel& m) const {
    return m.trained.params[model_->variables().size()];
  }

  fs::path dir_;
  Job job_;
  std::unique_ptr<Model> model_;
};

TEST_F(ExportFilesTest, ABaseWithItsDeltasIsTheModelAtTheNewestStep) {
  WriteBase(100, 1);
  WriteDelta(150, 100, 100, 2, /*row=*/3);
  WriteDelta(200, 100, 150, 3, /*row=*/7);
  StatusOr<ExportedModel> m = LoadExport(dir_.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->step, 200);
  EXPECT_EQ(m->base_step, 100);
  EXPECT_EQ(m->deltas, 2);
  EXPECT_FLOAT_EQ(m->trained.params[0].f32()[0], 3);  // the newest delta's dense values
  const Tensor& table = Table(*m);
  const int64_t dim = table.shape()[1];
  EXPECT_FLOAT_EQ(table.f32()[3 * dim], 2);  // each delta's rows
  EXPECT_FLOAT_EQ(table.f32()[7 * dim], 3);
  EXPECT_FLOAT_EQ(table.f32()[5 * dim], 1 + 5 * dim / 1000.0f);  // the base's
  // Up to a step: the first delta only.
  StatusOr<ExportedModel> at150 = LoadExport(dir_.string(), 150);
  ASSERT_TRUE(at150.ok());
  EXPECT_EQ(at150->step, 150);
  EXPECT_FLOAT_EQ(Table(*at150).f32()[7 * dim], 1 + 7 * dim / 1000.0f);
}

TEST_F(ExportFilesTest, UpdateAppliesOnlyWhatIsNewAndLeavesTheOldModelAlone) {
  WriteBase(100, 1);
  ExportedModel current;
  bool changed = false;
  ASSERT_TRUE(UpdateExport(dir_.string(), &current, &changed).ok());
  EXPECT_TRUE(changed);
  EXPECT_EQ(current.step, 100);
  ASSERT_TRUE(UpdateExport(dir_.string(), &current, &changed).ok());
  EXPECT_FALSE(changed);
  const ExportedModel before = current;  // a reader's copy, sharing the tensors
  WriteDelta(150, 100, 100, 2, 3);
  ASSERT_TRUE(UpdateExport(dir_.string(), &current, &changed).ok());
  EXPECT_TRUE(changed);
  EXPECT_EQ(current.step, 150);
  const int64_t dim = Table(current).shape()[1];
  EXPECT_FLOAT_EQ(Table(current).f32()[3 * dim], 2);
  EXPECT_FLOAT_EQ(Table(before).f32()[3 * dim], 1 + 3 * dim / 1000.0f);  // untouched
  // A newer base replaces the chain.
  WriteBase(300, 5);
  ASSERT_TRUE(UpdateExport(dir_.string(), &current, &changed).ok());
  EXPECT_EQ(current.base_step, 300);
  EXPECT_EQ(current.deltas, 0);
}

TEST_F(ExportFilesTest, AnotherBasesDeltasAreNotApplied) {
  WriteBase(100, 1);
  WriteBase(200, 2);
  WriteDelta(150, 100, 100, 9, 3);  // of the older base
  WriteDelta(250, 200, 200, 3, 4);
  StatusOr<ExportedModel> m = LoadExport(dir_.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->step, 250);
  EXPECT_EQ(m->deltas, 1);
}

TEST_F(ExportFilesTest, AGapInTheChainIsRefused) {
  WriteBase(100, 1);
  WriteDelta(200, 100, 150, 2, 3);  // follows 150, which is missing
  StatusOr<ExportedModel> m = LoadExport(dir_.string());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kDataLoss);
  EXPECT_NE(m.status().message().find("150"), std::string::npos) << m.status().message();
}

TEST_F(ExportFilesTest, ADeltaThatDoesNotFitItsBaseIsRefused) {
  WriteBase(100, 1);
  WriteDelta(150, 100, 100, 2, /*row=*/50);  // the tables have 50 rows
  StatusOr<ExportedModel> m = LoadExport(dir_.string());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kDataLoss);
  EXPECT_NE(m.status().message().find("out of range"), std::string::npos) << m.status().message();
}

TEST_F(ExportFilesTest, NoBaseIsNotFound) {
  EXPECT_EQ(LoadExport(dir_.string()).status().code(), Code::kNotFound);
  EXPECT_EQ(LoadExport((dir_ / "missing").string()).status().code(), Code::kNotFound);
  WriteBase(100, 1);
  EXPECT_EQ(LoadExport(dir_.string(), 99).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pst
