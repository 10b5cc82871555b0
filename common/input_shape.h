// InputShape: one example as a model takes it, an image (H, W, C, stored
// HWC as the models read NHWC batches) or a vector of D features.
#ifndef PST_COMMON_INPUT_SHAPE_H_
#define PST_COMMON_INPUT_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pst {

class InputShape {
 public:
  // D plain features. Implicit: a model's input is most often given so.
  InputShape(int64_t features) : dims_{features} {}  // NOLINT(runtime/explicit)
  // {H, W, C} for an image, {D} for features; empty means {0}.
  explicit InputShape(std::vector<int64_t> dims);

  int64_t size() const;  // H*W*C or D
  bool is_image() const { return dims_.size() == 3; }
  int64_t height() const { return is_image() ? dims_[0] : 1; }
  int64_t width() const { return is_image() ? dims_[1] : 1; }
  int64_t channels() const { return is_image() ? dims_[2] : size(); }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::string ToString() const;  // "28x28x1 image" or "20 features"

  bool operator==(const InputShape& other) const { return dims_ == other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace pst

#endif  // PST_COMMON_INPUT_SHAPE_H_
