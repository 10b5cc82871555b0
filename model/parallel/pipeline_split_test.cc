// SplitStages and LayerCost: balanced consecutive cuts by multiply-adds.
#include "model/parallel/pipeline_split.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

TEST(PipelineSplitTest, OneStageTakesEverything) {
  EXPECT_EQ(SplitStages({5, 1, 7}, 1), (std::vector<size_t>{0}));
}

TEST(PipelineSplitTest, AsManyStagesAsLayers) {
  EXPECT_EQ(SplitStages({5, 1, 7}, 3), (std::vector<size_t>{0, 1, 2}));
}

TEST(PipelineSplitTest, MinimisesTheCostliestStage) {
  // {10} {1 1 1 1 1 1} and {10 1 1 1} ... : the best worst stage is 10.
  EXPECT_EQ(SplitStages({10, 1, 1, 1, 1, 1, 1}, 2), (std::vector<size_t>{0, 1}));
  // Equal halves.
  EXPECT_EQ(SplitStages({1, 2, 3, 3, 2, 1}, 2), (std::vector<size_t>{0, 3}));
  // Three stages of 6 each.
  EXPECT_EQ(SplitStages({2, 4, 3, 3, 5, 1}, 3), (std::vector<size_t>{0, 2, 4}));
}

TEST(PipelineSplitTest, EveryStageGetsALayerEvenWhenFree) {
  EXPECT_EQ(SplitStages({100, 0, 0}, 3), (std::vector<size_t>{0, 1, 2}));
}

TEST(PipelineSplitTest, LayerCostCountsMultiplyAdds) {
  auto kernels = MakeKernels("cpu").value();
  auto cnn = MakeLayers("cnn", 784, 10, *kernels).value();
  // conv0 5x5x1->20 at 24x24: 24*24*20*25 ; ReLU and pool: their inputs.
  EXPECT_EQ(LayerCost(*cnn[0]), 24 * 24 * 20 * 25);
  EXPECT_EQ(LayerCost(*cnn[1]), 24 * 24 * 20);
  // conv1 5x5x20->50 at 8x8.
  EXPECT_EQ(LayerCost(*cnn[3]), 8 * 8 * 50 * 5 * 5 * 20);
  // dense0 800->500.
  EXPECT_EQ(LayerCost(*cnn[6]), 800 * 500);
}

}  // namespace
}  // namespace pst
