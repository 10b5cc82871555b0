#include "model/model_spec.h"

#include <gtest/gtest.h>

#include "kernels/cpu_kernels.h"
#include "model/model_zoo.h"

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

}  // namespace
}  // namespace pst
