// Click models by name and by spec: the zoo's parts, what each spec line
// sets, the errors that name the line, and the training each model carries.
#include "model/ctr/ctr_spec.h"

#include <gtest/gtest.h>

#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

CtrModelConfig Config(const std::string& name) {
  StatusOr<CtrModelConfig> config = ClickModelConfig(name, 13, 26, 1000);
  EXPECT_TRUE(config.ok()) << name << ": " << config.status().ToString();
  return config.ok() ? *config : CtrModelConfig{};
}

TEST(CtrSpecTest, EveryZooModelIsAClickModelThatBuilds) {
  EXPECT_EQ(ClickModelNames(),
            (std::vector<std::string>{"wide_deep", "fm", "deepfm", "dcn_v2", "dlrm"}));
  for (const std::string& name : ClickModelNames()) {
    EXPECT_TRUE(IsClickModel(name)) << name;
    EXPECT_TRUE(CtrModel::Create(Config(name)).ok()) << name;
  }
  EXPECT_FALSE(IsClickModel("mlp"));
}

TEST(CtrSpecTest, TheZooModelsHaveTheirParts) {
  const CtrModelConfig wide_deep = Config("wide_deep");
  EXPECT_EQ(wide_deep.embedding_dim, 8);
  EXPECT_TRUE(wide_deep.wide);
  EXPECT_EQ(wide_deep.hidden, (std::vector<int64_t>{64, 32}));
  EXPECT_FALSE(wide_deep.fm);
  const CtrModelConfig fm = Config("fm");
  EXPECT_TRUE(fm.fm && fm.wide && fm.hidden.empty());
  const CtrModelConfig deepfm = Config("deepfm");
  EXPECT_TRUE(deepfm.fm && deepfm.wide);
  EXPECT_EQ(deepfm.hidden, (std::vector<int64_t>{256, 128}));
  const CtrModelConfig dcn = Config("dcn_v2");
  EXPECT_EQ(dcn.cross_layers, 3);
  EXPECT_FALSE(dcn.wide);
  const CtrModelConfig dlrm = Config("dlrm");
  EXPECT_TRUE(dlrm.dot);
  EXPECT_EQ(dlrm.bottom, (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(dlrm.table_rows, 1000);
  EXPECT_EQ(dlrm.num_fields, 26);
}

TEST(CtrSpecTest, WideDeepKeepsItsVariableNames) {
  auto model = CtrModel::Create(Config("wide_deep")).value();
  ASSERT_EQ(model->variables().size(), 6u);
  EXPECT_EQ(model->variables()[0].name, "dense0/weights");
  EXPECT_EQ(model->variables()[5].name, "dense2/bias");
  EXPECT_EQ(model->parts().cross, nullptr);
  EXPECT_NE(CtrModel::Create(Config("dcn_v2")).value()->parts().cross, nullptr);
}

TEST(CtrSpecTest, SpecLinesSetTheirParts) {
  const std::string spec =
      "embedding 12 combiner=sqrtn\n"
      "cross 2 rank=4 parallel  # DCN-v2, parallel\n"
      "dense 32 relu\n"
      "batchnorm\n"
      "dropout 0.25\n"
      "dense classes\n"
      "optimizer adagrad\n"
      "learning_rate 0.02\n";
  StatusOr<CtrModelConfig> config = ParseClickSpec(spec, "my.spec");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->embedding_dim, 12);
  EXPECT_EQ(config->combiner, Combiner::kSqrtN);
  EXPECT_EQ(config->cross_layers, 2);
  EXPECT_EQ(config->cross_rank, 4);
  EXPECT_TRUE(config->cross_parallel);
  EXPECT_TRUE(config->batchnorm);
  EXPECT_DOUBLE_EQ(config->dropout, 0.25);
  EXPECT_FALSE(config->wide);
  const std::string name = SpecModelName(spec);
  ASSERT_TRUE(IsClickModel(name));
  StatusOr<ClickTraining> training = ClickModelTraining(name);
  ASSERT_TRUE(training.ok());
  EXPECT_EQ(training->optimizer, "adagrad");
  EXPECT_FLOAT_EQ(training->learning_rate, 0.02f);
}

TEST(CtrSpecTest, BadLinesAreNamedWithTheirNumber) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"embedding 8\ncross two\ndense classes\n", "my.spec:2: expected 'cross LAYERS"},
      {"embedding 8\ncross 2 rank=0\ndense classes\n", "my.spec:2"},
      {"embedding 8\ndropout 1\ndense classes\n", "my.spec:2: expected 'dropout RATE'"},
      {"embedding 8 combiner=max\ndense classes\n", "my.spec:1: unknown 'combiner=max'"},
      {"embedding 8\nbottom 4 tanh\ndense classes\n",
       "my.spec:2: a click model's hidden layer "
       "is 'bottom N relu'"},
      {"embedding 8\nsoftmax\ndense classes\n", "my.spec:2: a click model takes"},
      {"embedding 8\ndense classes\nfm\n", "my.spec:3: 'dense classes' must be the last layer"},
  };
  for (const auto& [spec, message] : bad) {
    StatusOr<CtrModelConfig> config = ParseClickSpec(spec, "my.spec");
    ASSERT_FALSE(config.ok()) << spec;
    EXPECT_NE(config.status().message().find(message), std::string::npos)
        << config.status().message();
  }
}

TEST(CtrSpecTest, EachModelCarriesItsOptimizerAndRate) {
  for (const char* name : {"wide_deep", "fm", "deepfm", "dcn_v2", "dlrm"}) {
    EXPECT_EQ(ClickModelTraining(name)->optimizer, "adam") << name;
    EXPECT_FLOAT_EQ(ClickModelTraining(name)->learning_rate, 0.001f) << name;
  }
  // Another optimizer than the model's: that optimizer's usual rate.
  EXPECT_FLOAT_EQ(ClickModelLearningRate("deepfm", "adagrad").value(), 0.05f);
  EXPECT_FLOAT_EQ(ClickModelLearningRate("wide_deep", "adagrad").value(), 0.05f);
  // A spec without optimizer and rate lines: --optimizer's default, sgd.
  const std::string plain = SpecModelName("embedding 4\ndense classes\n");
  EXPECT_EQ(ClickModelTraining(plain)->optimizer, "sgd");
  EXPECT_FLOAT_EQ(ClickModelTraining(plain)->learning_rate, 0.05f);
}

}  // namespace
}  // namespace pst
