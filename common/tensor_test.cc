#include "common/tensor.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(TensorTest, ZeroFilledWithShape) {
  Tensor t(DType::kFloat32, {3, 4});
  EXPECT_EQ(t.num_elements(), 12);
  EXPECT_EQ(t.num_bytes(), 48u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(t.f32()[i], 0.0f);
  EXPECT_EQ(ShapeToString(t.shape()), "[3,4]");
}

TEST(TensorTest, CopyIsShallowCloneIsDeep) {
  Tensor a(DType::kInt64, {2});
  Tensor shallow = a;
  Tensor deep = a.Clone();
  a.i64()[0] = 7;
  EXPECT_EQ(shallow.i64()[0], 7);
  EXPECT_EQ(deep.i64()[0], 0);
}

TEST(TensorTest, ScalarHasOneElement) {
  Tensor s(DType::kInt64, {});
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_EQ(s.num_bytes(), 8u);
}

}  // namespace
}  // namespace pst
