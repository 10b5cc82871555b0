// SlotLru: the least-recently-used order of a table's row slots
// 0..capacity-1, as an intrusive doubly linked list of int32 links (8 bytes
// a slot): the eviction order of the dynamic tables, in RAM
// (dynamic_embedding_table.h) and on disk (disk_embedding_table.h).
//
// The links are allocated uninitialized (new int32_t[n], not written until
// a slot is linked), so a large capacity costs no resident memory up front.
//
// Thread safety: none; the table's mutex guards it.
#ifndef PST_PS_SPARSE_SLOT_LRU_H_
#define PST_PS_SPARSE_SLOT_LRU_H_

#include <cstdint>
#include <memory>

namespace pst {

class SlotLru {
 public:
  static constexpr int32_t kNone = -1;

  explicit SlotLru(int64_t capacity) : prev_(new int32_t[capacity]), next_(new int32_t[capacity]) {}

  // Unlinks every slot.
  void Clear() { head_ = tail_ = kNone; }
  // Links `slot` (not linked) as the most recently used.
  void PushFront(int32_t slot) {
    prev_[slot] = kNone;
    next_[slot] = head_;
    if (head_ != kNone) prev_[head_] = slot;
    head_ = slot;
    if (tail_ == kNone) tail_ = slot;
  }
  // Unlinks `slot` (linked).
  void Remove(int32_t slot) {
    const int32_t before = prev_[slot], after = next_[slot];
    if (before != kNone) {
      next_[before] = after;
    } else {
      head_ = after;
    }
    if (after != kNone) {
      prev_[after] = before;
    } else {
      tail_ = before;
    }
  }
  // Makes `slot` (linked) the most recently used.
  void Touch(int32_t slot) {
    if (slot == head_) return;
    Remove(slot);
    PushFront(slot);
  }
  // The least recently used slot (kNone when none is linked), and the one
  // used just after `slot`.
  int32_t least_recent() const { return tail_; }
  int32_t more_recent(int32_t slot) const { return prev_[slot]; }

 private:
  std::unique_ptr<int32_t[]> prev_;  // towards the head (more recent)
  std::unique_ptr<int32_t[]> next_;  // towards the tail (less recent)
  int32_t head_ = kNone;             // most recently used
  int32_t tail_ = kNone;             // least recently used
};

}  // namespace pst

#endif  // PST_PS_SPARSE_SLOT_LRU_H_
