#include "predict/ensemble.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pst {
namespace {

// Three members, four examples, three classes, worked by hand (a tie goes
// to the first class):
//   example 0 (label 0): members say 0, 1, 0        mean (0.5, 0.4, 0.1) -> 0
//   example 1 (label 1): members say 2, 1, 1        mean (0.1, 0.5, 0.4) -> 1
//   example 2 (label 2): members say 0, 0, 2        mean (0.5, 0.1, 0.4) -> 0
//   example 3 (label 1): 0 (tie), 1 (sure), 0 (tie) mean (0.3, 0.4, 0.3) -> 1
// Members: 1/4, 2/4, 3/4 right; the ensemble 3/4.
const std::vector<std::vector<float>> kMembers = {
    {0.6f, 0.3f, 0.1f, /**/ 0.1f, 0.3f, 0.6f, /**/ 0.6f, 0.2f, 0.2f, /**/ 0.45f, 0.1f, 0.45f},
    {0.3f, 0.6f, 0.1f, /**/ 0.1f, 0.6f, 0.3f, /**/ 0.6f, 0.1f, 0.3f, /**/ 0.0f, 1.0f, 0.0f},
    {0.6f, 0.3f, 0.1f, /**/ 0.1f, 0.6f, 0.3f, /**/ 0.3f, 0.0f, 0.7f, /**/ 0.45f, 0.1f, 0.45f},
};
const std::vector<int32_t> kLabels = {0, 1, 2, 1};

TEST(EnsembleTest, TheMeanOfTheMembersProbabilities) {
  const std::vector<float> mean = MeanProbabilities(kMembers);
  const std::vector<float> expected = {0.5f, 0.4f, 0.1f, 0.1f, 0.5f, 0.4f,
                                       0.5f, 0.1f, 0.4f, 0.3f, 0.4f, 0.3f};
  ASSERT_EQ(mean.size(), expected.size());
  for (size_t i = 0; i < mean.size(); ++i) EXPECT_NEAR(mean[i], expected[i], 1e-6) << i;
}

TEST(EnsembleTest, AccuracyOfEachMemberAndOfTheEnsemble) {
  EXPECT_DOUBLE_EQ(Accuracy(kMembers[0], kLabels, 3), 0.25);
  EXPECT_DOUBLE_EQ(Accuracy(kMembers[1], kLabels, 3), 0.5);
  EXPECT_DOUBLE_EQ(Accuracy(kMembers[2], kLabels, 3), 0.75);
  EXPECT_DOUBLE_EQ(Accuracy(MeanProbabilities(kMembers), kLabels, 3), 0.75);
}

TEST(EnsembleTest, TiesGoToTheFirstClass) {
  EXPECT_DOUBLE_EQ(Accuracy({0.5f, 0.5f}, {0}, 2), 1.0);
  EXPECT_DOUBLE_EQ(Accuracy({0.5f, 0.5f}, {1}, 2), 0.0);
}

TEST(EnsembleTest, FormatHasARowPerMemberAndTheEnsembleLines) {
  EnsembleReport report;
  report.members = {"a.bin (mlp)", "b.bin (cnn)"};
  report.splits = {{"validation", 10, {0.5, 0.7}, 0.8}, {"test", 20, {0.55, 0.65}, 0.75}};
  const std::string text = report.Format();
  // Columns as wide as their name or their widest accuracy, whichever is wider.
  EXPECT_NE(text.find("model        validation  test\n"), std::string::npos) << text;
  EXPECT_NE(text.find("a.bin (mlp)  0.5000      0.5500\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ensemble     0.8000      0.7500"), std::string::npos) << text;
  EXPECT_NE(text.find("Ensemble-Validation-Accuracy: 0.8000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Ensemble-Test-Accuracy: 0.7500\n"), std::string::npos) << text;
}

// A split name narrower than its accuracies ("test") does not shift the
// columns after it.
TEST(EnsembleTest, ColumnsLineUpWhateverTheSplitNames) {
  EnsembleReport report;
  report.members = {"a.bin", "b.bin"};
  report.splits = {{"test", 20, {0.55, 0.65}, 0.75}, {"validation", 10, {0.5, 0.7}, 0.8}};
  const std::string text = report.Format();
  EXPECT_NE(text.find("model     test    validation\n"), std::string::npos) << text;
  EXPECT_NE(text.find("a.bin     0.5500  0.5000\n"), std::string::npos) << text;
}

TEST(EnsembleTest, OneMemberOrAWrongDeviceCountIsRefused) {
  EnsembleOptions options;
  options.members = {"a.bin"};
  EXPECT_EQ(RunEnsemble(options).status().code(), Code::kInvalidArgument);
  options.members = {"a.bin", "b.bin"};
  options.devices = {"cpu"};
  const Status status = RunEnsemble(options).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("1 devices for 2 ensemble members"), std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace pst
