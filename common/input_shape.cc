#include "common/input_shape.h"

namespace pst {

InputShape::InputShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) dims_ = {0};
}

int64_t InputShape::size() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::string InputShape::ToString() const {
  if (!is_image()) return std::to_string(size()) + " features";
  return std::to_string(dims_[0]) + "x" + std::to_string(dims_[1]) + "x" +
         std::to_string(dims_[2]) + " image";
}

}  // namespace pst
