#include "common/tensor.h"

#include <glog/logging.h>

#include <cstring>

namespace pst {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kInt64: return 8;
    case DType::kBFloat16: return 2;
  }
  LOG(FATAL) << "unknown dtype " << static_cast<int>(dtype);
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kInt64: return "int64";
    case DType::kBFloat16: return "bfloat16";
  }
  return "unknown";
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) CHECK_GE(d, 0) << "negative dimension";
  // Value-initialised: zero-filled. Never null, even for zero elements.
  buffer_ = std::shared_ptr<uint8_t[]>(new uint8_t[num_bytes() + 1]());
}

Tensor ScalarI64(int64_t value) {
  Tensor t(DType::kInt64, {});
  t.i64()[0] = value;
  return t;
}

Tensor Tensor::Uninitialized(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  for (int64_t d : t.shape_) CHECK_GE(d, 0) << "negative dimension";
  t.buffer_ = std::shared_ptr<uint8_t[]>(new uint8_t[t.num_bytes() + 1]);
  return t;
}

Tensor Tensor::Wrap(DType dtype, Shape shape, std::shared_ptr<uint8_t[]> buffer) {
  CHECK(buffer != nullptr);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.buffer_ = std::move(buffer);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor copy = Uninitialized(dtype_, shape_);
  if (!empty()) std::memcpy(copy.data(), data(), num_bytes());
  return copy;
}

}  // namespace pst
