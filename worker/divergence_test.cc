#include "worker/divergence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace pst {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor Filled(int64_t n, float value) {
  Tensor t(DType::kFloat32, {n});
  std::fill(t.f32(), t.f32() + n, value);
  return t;
}

class NonFiniteStepTest : public ::testing::Test {
 protected:
  std::vector<VariableSpec> variables_ = {{"fc1/weights", DType::kFloat32, {3}},
                                          {"fc1/biases", DType::kFloat32, {2}}};
  std::vector<Tensor> grads_ = MakeGrads();
  static std::vector<Tensor> MakeGrads() {
    std::vector<Tensor> grads;
    grads.push_back(Filled(3, 0.5f));
    grads.push_back(Filled(2, -0.25f));
    return grads;
  }
};

TEST_F(NonFiniteStepTest, FiniteStepIsFine) {
  EXPECT_EQ(NonFiniteStep(2.3f, grads_, variables_), std::nullopt);
}

TEST_F(NonFiniteStepTest, NamesANonFiniteLoss) {
  EXPECT_EQ(NonFiniteStep(kNaN, grads_, variables_), "loss nan");
  EXPECT_EQ(NonFiniteStep(-kNaN, grads_, variables_), "loss nan");
  EXPECT_EQ(NonFiniteStep(kInf, grads_, variables_), "loss inf");
  EXPECT_EQ(NonFiniteStep(-kInf, grads_, variables_), "loss -inf");
}

TEST_F(NonFiniteStepTest, NamesTheVariableOfANonFiniteGradient) {
  grads_[1].f32()[1] = kInf;
  EXPECT_EQ(NonFiniteStep(0.5f, grads_, variables_),
            "gradient of fc1/biases not finite (loss 0.5)");
  grads_[0].f32()[2] = kNaN;
  EXPECT_EQ(NonFiniteStep(0.5f, grads_, variables_),
            "gradient of fc1/weights not finite (loss 0.5)");
}

TEST(DivergenceTest, RecognizesAPsRefusingNonFiniteValues) {
  EXPECT_TRUE(IsNonFiniteRefusal(
      InvalidArgument("push of fc1/weights from worker:0 holds non-finite values")));
  EXPECT_FALSE(IsNonFiniteRefusal(InvalidArgument("tensor fc1/weights has the wrong shape")));
  EXPECT_FALSE(IsNonFiniteRefusal(Unavailable("non-finite")));
}

TEST(DivergenceTest, SaysWhatDivergedWhereAndWhatToTry) {
  const Status s = Diverged("loss nan", 812);
  EXPECT_EQ(s.code(), Code::kAborted);
  EXPECT_EQ(s.message(),
            "training diverged: loss nan at global step 812 (try a lower --learning_rate)");
}

}  // namespace
}  // namespace pst
