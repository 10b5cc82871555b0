// RowSlots: the slot of each distinct row id of one batch, numbered 0, 1,
// 2, ... in the order the ids are first seen.
//
// An open-addressing set (linear probing, a power-of-two table at most half
// full) made for one batch: a click step looks up 256 x 39 keys twice, and
// std::unordered_map's allocation per new key was about 4% of a deepfm
// step's CPU on 2 cores.
#ifndef PST_MODEL_CTR_ROW_SLOTS_H_
#define PST_MODEL_CTR_ROW_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace pst {

class RowSlots {
 public:
  // Room for up to `max_rows` distinct ids.
  explicit RowSlots(size_t max_rows) {
    size_t capacity = 16;
    while (capacity < 2 * max_rows) capacity *= 2;
    rows_.resize(capacity);
    slots_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
  }

  // The slot of `row`, and whether this call gave it one (the next number).
  std::pair<int32_t, bool> Insert(int64_t row) {
    // Fibonacci hashing: consecutive ids spread over the table.
    size_t i = (static_cast<uint64_t>(row) * 0x9E3779B97F4A7C15ull) >> 32 & mask_;
    while (slots_[i] != kEmpty) {
      if (rows_[i] == row) return {slots_[i], false};
      i = (i + 1) & mask_;
    }
    rows_[i] = row;
    slots_[i] = size_;
    return {size_++, true};
  }

  int32_t size() const { return size_; }

 private:
  static constexpr int32_t kEmpty = -1;
  std::vector<int64_t> rows_;
  std::vector<int32_t> slots_;
  size_t mask_ = 0;
  int32_t size_ = 0;
};

}  // namespace pst

#endif  // PST_MODEL_CTR_ROW_SLOTS_H_
