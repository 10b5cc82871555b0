// Tensor: a dtype, a shape and a reference-counted byte buffer.
//
// Copies are shallow: two Tensors may share one buffer (that is how a tensor
// is handed to ZeroMQ for a zero-copy send). Use Clone() for a deep copy. A
// tensor that has been handed to a send must not be modified until the send
// has finished with it (the transport drops its reference then).
#ifndef PST_COMMON_TENSOR_H_
#define PST_COMMON_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pst {

// Values travel on the wire: never renumber.
// kBFloat16 is a wire format only (common/bfloat16.h): no variable holds it.
enum class DType : uint8_t { kFloat32 = 0, kInt64 = 1, kBFloat16 = 2 };

using Shape = std::vector<int64_t>;

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
int64_t NumElements(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[784,100]"

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor.
  Tensor(DType dtype, Shape shape);
  // A tensor whose bytes are about to be overwritten (not zero-filled).
  static Tensor Uninitialized(DType dtype, Shape shape);
  // A tensor over bytes someone else owns; `buffer` keeps them alive (an
  // aliasing shared_ptr, e.g. into a received network frame).
  static Tensor Wrap(DType dtype, Shape shape, std::shared_ptr<uint8_t[]> buffer);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t num_bytes() const { return num_elements() * DTypeSize(dtype_); }
  bool empty() const { return buffer_ == nullptr; }

  void* data() { return buffer_.get(); }
  const void* data() const { return buffer_.get(); }
  float* f32() { return static_cast<float*>(data()); }
  const float* f32() const { return static_cast<const float*>(data()); }
  int64_t* i64() { return static_cast<int64_t*>(data()); }
  const int64_t* i64() const { return static_cast<const int64_t*>(data()); }
  uint16_t* bf16() { return static_cast<uint16_t*>(data()); }
  const uint16_t* bf16() const { return static_cast<const uint16_t*>(data()); }

  // The buffer, for handing ownership to a zero-copy send.
  const std::shared_ptr<uint8_t[]>& buffer() const { return buffer_; }

  Tensor Clone() const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  std::shared_ptr<uint8_t[]> buffer_;
};

// A scalar int64 tensor (a checkpoint's versions, counts and steps).
Tensor ScalarI64(int64_t value);

}  // namespace pst

#endif  // PST_COMMON_TENSOR_H_
