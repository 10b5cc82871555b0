#include "model/zoo/model_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "kernels/cpu_kernels.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

constexpr char kSmallCnn[] =
    "# a small CNN\n"
    "conv 3x3 8 same relu\n"
    "maxpool 2\n"
    "conv 3x3 16 stride 2 same relu   # 4x4 -> 2x2\n"
    "dense 32 relu\n"
    "dropout 0.25\n"
    "dense classes\n"
    "learning_rate 0.05\n";

std::string ErrorOf(const std::string& text) {
  const Status s = ParseModelSpec(text, "my.spec").status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  return s.message();
}

TEST(ModelSpecTest, ParsesLayersAndTheLearningRate) {
  StatusOr<ModelSpec> spec = ParseModelSpec(kSmallCnn, "small.spec");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->layers.size(), 6u);
  const LayerSpec& conv1 = spec->layers[2];
  EXPECT_EQ(conv1.kind, LayerSpec::Kind::kConv);
  EXPECT_EQ(conv1.stride, 2);
  EXPECT_EQ(conv1.units, 16);
  EXPECT_EQ(conv1.line, 4);
  EXPECT_TRUE(spec->layers[0].same_padding);
  EXPECT_EQ(spec->layers.back().units, 0);  // classes
  EXPECT_FLOAT_EQ(*spec->learning_rate, 0.05f);
}

TEST(ModelSpecTest, ErrorsNameTheFileAndLine) {
  EXPECT_NE(ErrorOf("dense 10\nconv 3x 8\ndense classes\n").find("my.spec:2: expected 'conv RxS"),
            std::string::npos);
  EXPECT_NE(ErrorOf("lstm 10\ndense classes\n").find("my.spec:1: unknown layer 'lstm'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("dense 10 tanh\ndense classes\n").find("my.spec:1: unexpected 'tanh'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("dropout 1.5\ndense classes\n").find("my.spec:1: expected 'dropout RATE'"),
            std::string::npos);
  for (const char* bad : {"batchnorm momentum 1\n", "batchnorm momentum\n", "batchnorm 0.9\n"}) {
    EXPECT_NE(ErrorOf(std::string(bad) + "dense classes\n")
                  .find("my.spec:1: expected 'batchnorm [momentum M] [relu|sigmoid]'"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(ErrorOf("batchnorm relu tanh\ndense classes\n").find("my.spec:1: unexpected 'tanh'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("dense 10 relu\n").find("the last layer must be 'dense classes'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("dense classes relu\n").find("the last layer must be 'dense classes'"),
            std::string::npos);
}

TEST(ModelSpecTest, LayersThatDoNotFitTheInputNameTheLine) {
  const ModelSpec conv = *ParseModelSpec("conv 3x3 4\ndense classes\n", "c.spec");
  CpuKernels kernels;
  Status s = SpecLayers(conv, 20, 3, kernels).status();
  EXPECT_NE(s.message().find("line 1: a convolution needs an image, got 20 features"),
            std::string::npos)
      << s.message();
  s = SpecLayers(*ParseModelSpec("conv 9x9 4\ndense classes\n", "c.spec"), InputShape({8, 8, 1}), 3,
                 kernels)
          .status();
  EXPECT_NE(s.message().find("line 1: a 9x9 filter does not fit a 8x8 image"), std::string::npos)
      << s.message();
}

TEST(ModelSpecTest, ASpecIsAModelLikeTheZoos) {
  const std::string name = SpecModelName(kSmallCnn);
  StatusOr<std::unique_ptr<Model>> model = MakeModel(name, InputShape({8, 8, 3}), 4);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<std::string> names;
  for (const VariableSpec& v : (*model)->variables()) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv0/weights", "conv0/bias", "conv1/weights",
                                             "conv1/bias", "dense0/weights", "dense0/bias",
                                             "dense1/weights", "dense1/bias"}));
  EXPECT_EQ((*model)->variables()[4].shape, (Shape{2 * 2 * 16, 32}));
  EXPECT_FLOAT_EQ(RecommendedLearningRate(name).value(), 0.05f);
  EXPECT_FALSE(RecommendedLearningRate(SpecModelName("dense classes\n")).ok());
  EXPECT_NE(MakeModel(name, 20, 4).status().message().find("a convolution needs an image"),
            std::string::npos);
}

// A batchnorm after a convolution normalizes per channel, after a dense
// layer per feature, and brings its activation and four variables.
TEST(ModelSpecTest, BatchNormFollowsConvOrDense) {
  StatusOr<ModelSpec> spec = ParseModelSpec(
      "conv 3x3 8 same\nbatchnorm relu\nmaxpool 2\ndense 16\nbatchnorm momentum 0.9 "
      "sigmoid\ndense classes\n",
      "bn.spec");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->layers[1].kind, LayerSpec::Kind::kBatchNorm);
  EXPECT_DOUBLE_EQ(spec->layers[1].rate, 0.99);
  EXPECT_EQ(spec->layers[1].activation, LayerSpec::Activation::kRelu);
  EXPECT_DOUBLE_EQ(spec->layers[4].rate, 0.9);
  CpuKernels kernels;
  StatusOr<std::vector<std::unique_ptr<Layer>>> layers =
      SpecLayers(*spec, InputShape({4, 4, 3}), 5, kernels);
  ASSERT_TRUE(layers.ok()) << layers.status().ToString();
  std::vector<std::string> described;
  for (const auto& layer : *layers) described.push_back(layer->Describe());
  EXPECT_EQ(described[1], "batchnorm0 (BatchNorm, 4x4x8 image)");
  EXPECT_EQ(described[5], "batchnorm1 (BatchNorm, 16 features)");
  EXPECT_EQ(described[6], "sigmoid (16)");
  std::vector<std::string> names;
  for (const VariableSpec& v : (*layers)[1]->Variables()) names.push_back(v.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"batchnorm0/gamma", "batchnorm0/beta",
                                      "batchnorm0/moving_mean", "batchnorm0/moving_variance"}));
}

TEST(ModelSpecTest, ParsesTheTrainingLines) {
  StatusOr<ModelSpec> spec = ParseModelSpec(
      "dense classes\n"
      "lr_schedule cosine decay_steps 5000 decay_rate 0.5 warmup_steps 200 min 0.001\n"
      "weight_decay 0.0005   # decoupled\n"
      "augment crop:2,flip\n",
      "train.spec");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->layers.size(), 1u);
  const SpecTraining& t = spec->training;
  EXPECT_EQ(t.lr_schedule, "cosine");
  EXPECT_EQ(t.lr_decay_steps, 5000);
  EXPECT_EQ(t.lr_decay_rate, 0.5);
  EXPECT_EQ(t.lr_warmup_steps, 200);
  EXPECT_EQ(t.lr_min, 0.001);
  EXPECT_EQ(t.weight_decay, 0.0005);
  EXPECT_EQ(t.augment, "crop:2,flip");

  // Each option on its own; none given: all unset.
  spec = ParseModelSpec("lr_schedule step decay_steps 100\ndense classes\n", "step.spec");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->training.lr_schedule, "step");
  EXPECT_EQ(spec->training.lr_decay_steps, 100);
  EXPECT_FALSE(spec->training.lr_decay_rate);
  EXPECT_FALSE(spec->training.lr_warmup_steps);
  EXPECT_FALSE(spec->training.lr_min);
  EXPECT_FALSE(spec->training.weight_decay);
  EXPECT_FALSE(spec->training.augment);
  spec = ParseModelSpec(kSmallCnn, "small.spec");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_FALSE(spec->training.lr_schedule);
  EXPECT_FALSE(spec->training.weight_decay);
  EXPECT_FALSE(spec->training.augment);
  EXPECT_EQ(ParseModelSpec("dense classes\nweight_decay 0\n", "s").value().training.weight_decay,
            0.0);
}

// The chief decides plateau's lowerings; a spec states its factor as for
// the other schedules.
TEST(ModelSpecTest, ParsesAPlateauSchedule) {
  StatusOr<ModelSpec> spec =
      ParseModelSpec("dense classes\nlr_schedule plateau decay_rate 0.5 min 0.001\n", "p.spec");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->training.lr_schedule, "plateau");
  EXPECT_EQ(spec->training.lr_decay_rate, 0.5);
  EXPECT_EQ(spec->training.lr_min, 0.001);
}

TEST(ModelSpecTest, TrainingLineErrorsNameTheFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"weight_decay -1", "my.spec:2: expected 'weight_decay W' with W >= 0"},
      {"weight_decay inf", "my.spec:2: expected 'weight_decay W' with W >= 0"},
      {"weight_decay", "my.spec:2: expected 'weight_decay W' with W >= 0"},
      {"weight_decay 0.1 0.2", "my.spec:2: expected 'weight_decay W' with W >= 0"},
      {"lr_schedule", "my.spec:2: expected 'lr_schedule constant|step|exponential|cosine|plateau"},
      {"lr_schedule linear",
       "my.spec:2: expected 'lr_schedule constant|step|exponential|cosine|plateau"},
      {"lr_schedule step decay_steps 0", "my.spec:2: expected 'decay_steps N' with N > 0"},
      {"lr_schedule step decay_steps 1.5", "my.spec:2: expected 'decay_steps N' with N > 0"},
      {"lr_schedule step decay_steps", "my.spec:2: expected 'decay_steps N' with N > 0"},
      {"lr_schedule step decay_rate 0", "my.spec:2: expected 'decay_rate R' with R > 0"},
      {"lr_schedule step decay_rate nan", "my.spec:2: expected 'decay_rate R' with R > 0"},
      {"lr_schedule constant warmup_steps -1", "my.spec:2: expected 'warmup_steps W' with W >= 0"},
      {"lr_schedule cosine min -0.1", "my.spec:2: expected 'min M' with M >= 0"},
      {"lr_schedule step decay_steps 10 decay_steps 20",
       "my.spec:2: unexpected 'decay_steps' (repeated or unknown)"},
      {"lr_schedule step gamma 0.5", "my.spec:2: unexpected 'gamma' (repeated or unknown)"},
      {"lr_schedule step\nlr_schedule cosine", "my.spec:3: a second 'lr_schedule' line"},
      {"weight_decay 0.1\nweight_decay 0.2", "my.spec:3: a second 'weight_decay' line"},
      {"augment", "my.spec:2: expected 'augment LIST'"},
      {"augment crop, flip", "my.spec:2: expected 'augment LIST'"},
      {"augment crop\naugment flip", "my.spec:3: a second 'augment' line"},
  };
  for (const auto& [line, error] : cases) {
    const std::string message = ErrorOf(std::string("dense classes\n") + line + "\n");
    EXPECT_NE(message.find(error), std::string::npos) << line << ": " << message;
  }
}

// The training lines by model name: a spec's; none for the zoo's models and
// click models' specs.
TEST(ModelSpecTest, SpecTrainingSettingsByModelName) {
  StatusOr<SpecTraining> t =
      SpecTrainingSettings(SpecModelName("dense classes\nlr_schedule exponential decay_steps "
                                         "50\nweight_decay 0.01\naugment flip\n"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->lr_schedule, "exponential");
  EXPECT_EQ(t->lr_decay_steps, 50);
  EXPECT_EQ(t->weight_decay, 0.01);
  EXPECT_EQ(t->augment, "flip");
  for (const std::string& name :
       {std::string("mlp"), std::string("cnn"), std::string("wide_deep"),
        SpecModelName("embedding 8\ndense classes\n"), SpecModelName(kSmallCnn)}) {
    t = SpecTrainingSettings(name);
    ASSERT_TRUE(t.ok()) << name << ": " << t.status().ToString();
    EXPECT_FALSE(t->lr_schedule || t->lr_decay_steps || t->lr_decay_rate || t->lr_warmup_steps ||
                 t->lr_min || t->weight_decay || t->augment)
        << name;
  }
  EXPECT_FALSE(SpecTrainingSettings(SpecModelName("weight_decay -1\ndense classes\n")).ok());
}

}  // namespace
}  // namespace pst
