#include "common/tensor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

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

// A pulled value is a Tensor over its bytes inside the received frame, with
// no copy: it must read and write the frame's bytes, and keep the frame
// alive for as long as any copy of it lives.
TEST(TensorTest, WrapAliasesTheFrameAndKeepsItAliveAsLongAsACopyLives) {
  bool freed = false;
  std::shared_ptr<uint8_t[]> frame(new uint8_t[64](), [&freed](uint8_t* bytes) {
    freed = true;
    delete[] bytes;
  });
  uint8_t* const frame_bytes = frame.get();
  const float value = 2.5f;
  std::memcpy(frame_bytes + 16, &value, sizeof value);
  Tensor t =
      Tensor::Wrap(DType::kFloat32, {4}, std::shared_ptr<uint8_t[]>(frame, frame_bytes + 16));
  EXPECT_EQ(t.data(), frame_bytes + 16);
  EXPECT_EQ(t.f32()[0], 2.5f);
  t.f32()[1] = -1.0f;
  float written;
  std::memcpy(&written, frame_bytes + 20, sizeof written);
  EXPECT_EQ(written, -1.0f);

  frame.reset();
  EXPECT_FALSE(freed) << "the tensor keeps the frame alive";
  Tensor copy = t;
  t = Tensor();
  EXPECT_FALSE(freed) << "so does a copy";
  EXPECT_EQ(copy.f32()[0], 2.5f);
  copy = Tensor();
  EXPECT_TRUE(freed) << "the last copy frees it";
}

// A zero-copy send holds the buffer: the bytes outlive the tensor.
TEST(TensorTest, BufferHandedToASendOutlivesTheTensor) {
  Tensor t(DType::kInt64, {3});
  t.i64()[2] = 42;
  std::shared_ptr<uint8_t[]> held = t.buffer();
  EXPECT_EQ(held.use_count(), 2);
  t = Tensor();
  EXPECT_EQ(held.use_count(), 1);
  int64_t last;
  std::memcpy(&last, held.get() + 16, sizeof last);
  EXPECT_EQ(last, 42);
}

}  // namespace
}  // namespace pst
