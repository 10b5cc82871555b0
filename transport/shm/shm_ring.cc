#include "transport/shm/shm_ring.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <string>

#include "transport/shm/process_alive.h"

namespace pst {
namespace {

using shm_layout::kDetached;
using shm_layout::RecordBytes;
using shm_layout::RecordHeader;

// Takes the side's pid slot from 0 (never attached) to this process's pid.
Status Claim(std::atomic<int64_t>& pid_slot, const char* side, const ShmSegment& segment) {
  int64_t expected = 0;
  if (pid_slot.compare_exchange_strong(expected, ::getpid(), std::memory_order_acq_rel)) {
    return Status::OK();
  }
  return FailedPrecondition("shared-memory segment " + segment.name() + " has had a " + side +
                            " already (pid " + std::to_string(expected) +
                            "); a ring serves one for its life");
}

// Detached, or attached by a process that no longer exists.
bool Gone(const std::atomic<int64_t>& pid_slot) {
  const int64_t pid = pid_slot.load(std::memory_order_acquire);
  return pid == kDetached || (pid > 0 && !ProcessAlive(static_cast<pid_t>(pid)));
}

// The shared positions as any sane ring has them: the reader never ahead of
// the writer, and never more than a ring's worth behind.
Status CheckPositions(uint64_t head, uint64_t tail, uint64_t capacity, const ShmSegment& segment) {
  if (head <= tail && tail - head <= capacity) return Status::OK();
  return DataLoss("shared-memory segment " + segment.name() + " has corrupt ring positions: head " +
                  std::to_string(head) + ", tail " + std::to_string(tail) + ", capacity " +
                  std::to_string(capacity));
}

Status CorruptRecord(const ShmSegment& segment, uint64_t position, const std::string& what) {
  return DataLoss("shared-memory segment " + segment.name() + ": corrupt record at byte " +
                  std::to_string(position) + ": " + what);
}

}  // namespace

StatusOr<std::unique_ptr<ShmRingWriter>> ShmRingWriter::Attach(ShmSegment& segment) {
  PST_RETURN_IF_ERROR(Claim(segment.ring().writer_pid, "writer", segment));
  return std::unique_ptr<ShmRingWriter>(new ShmRingWriter(segment));
}

ShmRingWriter::ShmRingWriter(ShmSegment& segment)
    : segment_(segment),
      ring_(segment.ring()),
      data_(segment.data()),
      capacity_(segment.capacity()),
      max_message_bytes_(std::min<uint64_t>(capacity_ - sizeof(RecordHeader),
                                            std::numeric_limits<uint32_t>::max())) {}

ShmRingWriter::~ShmRingWriter() { ring_.writer_pid.store(kDetached, std::memory_order_release); }

StatusOr<bool> ShmRingWriter::TryWrite(const void* data, size_t size) {
  PST_ASSIGN_OR_RETURN(const std::optional<ShmSlot> slot, TryReserve(size));
  if (!slot) return false;
  // An empty message may come with data == nullptr, which memcpy must not get.
  if (size > 0) std::memcpy(slot->data, data, size);
  Commit();
  return true;
}

StatusOr<std::optional<ShmSlot>> ShmRingWriter::TryReserve(size_t size) {
  CHECK_EQ(reserved_bytes_, 0u) << "TryReserve before the last reservation's Commit";
  if (size > max_message_bytes_) return std::optional<ShmSlot>();
  // Acquire: the reader is done with the bytes before head, which may now
  // be overwritten.
  const uint64_t head = ring_.head.load(std::memory_order_acquire);
  PST_RETURN_IF_ERROR(CheckPositions(head, tail_, capacity_, segment_));
  uint64_t free = capacity_ - (tail_ - head);
  uint64_t offset = tail_ % capacity_;
  const uint64_t to_end = capacity_ - offset;
  const uint64_t bytes = RecordBytes(size);
  if (bytes > to_end) {
    // The padding is published even when the message then does not fit:
    // otherwise a ring emptied with its position near the end could never
    // take a message longer than what is left before the end.
    if (free < to_end) return std::optional<ShmSlot>();
    const RecordHeader padding{sequence_, 0, shm_layout::kPaddingRecord};
    std::memcpy(data_ + offset, &padding, sizeof(padding));
    tail_ += to_end;
    free -= to_end;
    offset = 0;
    ring_.tail.store(tail_, std::memory_order_release);
  }
  if (bytes > free) return std::optional<ShmSlot>();
  reserved_offset_ = offset;
  reserved_bytes_ = bytes;
  reserved_size_ = size;
  return std::optional<ShmSlot>(ShmSlot{data_ + offset + sizeof(RecordHeader), size});
}

void ShmRingWriter::Commit() {
  CHECK_NE(reserved_bytes_, 0u) << "Commit without a reservation";
  const RecordHeader record{sequence_, static_cast<uint32_t>(reserved_size_),
                            shm_layout::kMessageRecord};
  std::memcpy(data_ + reserved_offset_, &record, sizeof(record));
  tail_ += reserved_bytes_;
  ++sequence_;
  reserved_bytes_ = 0;
  // Release: the reader that sees this tail sees the whole record.
  ring_.tail.store(tail_, std::memory_order_release);
}

bool ShmRingWriter::ReaderGone() const { return Gone(ring_.reader_pid); }

bool ShmRingWriter::ReaderDetached() const {
  return ring_.reader_pid.load(std::memory_order_acquire) == kDetached;
}

bool ShmRingWriter::ReaderAttached() const {
  return ring_.reader_pid.load(std::memory_order_acquire) != 0;
}

StatusOr<std::unique_ptr<ShmRingReader>> ShmRingReader::Attach(ShmSegment& segment) {
  PST_RETURN_IF_ERROR(Claim(segment.ring().reader_pid, "reader", segment));
  return std::unique_ptr<ShmRingReader>(new ShmRingReader(segment));
}

ShmRingReader::ShmRingReader(ShmSegment& segment)
    : segment_(segment),
      ring_(segment.ring()),
      data_(segment.data()),
      capacity_(segment.capacity()) {}

ShmRingReader::~ShmRingReader() { Detach(); }

void ShmRingReader::Detach() { ring_.reader_pid.store(kDetached, std::memory_order_release); }

StatusOr<std::optional<ShmMessage>> ShmRingReader::TryRead() {
  while (true) {
    // Acquire: every record before tail is completely written.
    const uint64_t tail = ring_.tail.load(std::memory_order_acquire);
    PST_RETURN_IF_ERROR(CheckPositions(read_, tail, capacity_, segment_));
    if (tail == read_) return std::optional<ShmMessage>();
    const uint64_t available = tail - read_;
    const uint64_t offset = read_ % capacity_;
    const uint64_t to_end = capacity_ - offset;
    if (available % shm_layout::kRecordAlign != 0) {
      return CorruptRecord(segment_, read_, "tail " + std::to_string(tail) + " is not aligned");
    }
    // A copy, so that what is checked is what is used even if the shared
    // bytes change meanwhile.
    RecordHeader record;
    std::memcpy(&record, data_ + offset, sizeof(record));
    if (record.sequence != sequence_) {
      return CorruptRecord(segment_, read_,
                           "sequence " + std::to_string(record.sequence) + ", expected " +
                               std::to_string(sequence_));
    }
    if (record.kind == shm_layout::kPaddingRecord) {
      if (record.length != 0 || to_end > available) {
        return CorruptRecord(segment_, read_, "padding record that does not end the ring");
      }
      read_ += to_end;
      held_.push_back(Held{sequence_, read_, /*released=*/true});
      AdvanceHead();
      continue;
    }
    if (record.kind != shm_layout::kMessageRecord) {
      return CorruptRecord(segment_, read_, "unknown kind " + std::to_string(record.kind));
    }
    const uint64_t bytes = RecordBytes(record.length);
    if (bytes > to_end || bytes > available) {
      return CorruptRecord(segment_, read_,
                           "length " + std::to_string(record.length) + " overruns the " +
                               std::to_string(std::min(to_end, available)) +
                               " bytes published before the ring's end");
    }
    read_ += bytes;
    held_.push_back(Held{sequence_, read_, /*released=*/false});
    ++sequence_;
    return std::optional<ShmMessage>(
        ShmMessage{data_ + offset + sizeof(RecordHeader), record.length, record.sequence});
  }
}

void ShmRingReader::Release() {
  for (Held& held : held_) {
    if (!held.released) {
      held.released = true;
      AdvanceHead();
      return;
    }
  }
  LOG(FATAL) << "Release without a message held";
}

void ShmRingReader::Release(uint64_t sequence) {
  for (Held& held : held_) {
    if (!held.released && held.sequence == sequence) {
      held.released = true;
      AdvanceHead();
      return;
    }
  }
  LOG(FATAL) << "Release of message " << sequence << ", which is not held";
}

void ShmRingReader::AdvanceHead() {
  const uint64_t before = head_;
  while (!held_.empty() && held_.front().released) {
    head_ = held_.front().end;
    held_.pop_front();
  }
  // Release: the writer may reuse these bytes only after this reader is done.
  if (head_ != before) ring_.head.store(head_, std::memory_order_release);
}

bool ShmRingReader::WriterGone() const { return Gone(ring_.writer_pid); }

}  // namespace pst
