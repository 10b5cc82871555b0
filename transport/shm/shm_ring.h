// A single-producer single-consumer ring of messages in a ShmSegment: one
// process writes, another reads each message in place, without a copy.
//
// Each message is one contiguous record (a 16-byte header with its length
// and sequence number, then the payload, padded to 16 bytes); where a
// record would cross the end of the data area, a padding record fills the
// rest and the message starts again at 0. The writer publishes a record only
// once all of it is written, by advancing the shared tail, so a writer that
// dies (even by SIGKILL) mid-message leaves nothing half-visible: the
// reader sees the complete messages before it and, through WriterGone(),
// that no more will come.
//
// The reader may hold several messages at once and release them in any
// order; the space of a message is reused only once it and every message
// before it are released (the ring frees its bytes in order).
//
// A ring serves one ShmRingWriter and one ShmRingReader for the segment's
// whole life (a second Attach of either side is refused); they may be in
// different processes, each with its own ShmSegment mapping of it.
//
// Thread safety: neither class is thread-safe; each is used by one thread at
// a time. The writer and the reader run concurrently with each other
// (lock-free: acquire/release on the shared head and tail).
//
// Ownership: both borrow `segment`, which must outlive them.
#ifndef PST_TRANSPORT_SHM_SHM_RING_H_
#define PST_TRANSPORT_SHM_SHM_RING_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "common/status.h"
#include "transport/shm/shm_segment.h"

namespace pst {

// Room for one message inside the ring, to be filled before Commit().
struct ShmSlot {
  uint8_t* data = nullptr;
  size_t size = 0;
};

// One message inside the ring, valid until Release().
struct ShmMessage {
  const uint8_t* data = nullptr;  // 16-byte aligned
  size_t size = 0;
  uint64_t sequence = 0;  // 0, 1, 2, ... in the order written
};

class ShmRingWriter {
 public:
  // FailedPrecondition when the segment's ring has had a writer already.
  static StatusOr<std::unique_ptr<ShmRingWriter>> Attach(ShmSegment& segment);
  // Marks the writer detached: the reader's WriterGone() turns true.
  ~ShmRingWriter();
  ShmRingWriter(const ShmRingWriter&) = delete;
  ShmRingWriter& operator=(const ShmRingWriter&) = delete;

  // The largest message the ring can ever hold (when it is empty).
  size_t max_message_bytes() const { return max_message_bytes_; }

  // Copies `size` bytes in as the next message. false: no room now, or
  // never (size > max_message_bytes()): the caller sends it another way.
  // DataLoss when the shared positions are corrupt.
  StatusOr<bool> TryWrite(const void* data, size_t size);

  // Room for a message of `size` bytes, to be written in place and then
  // published with Commit(); nullopt as TryWrite's false. Nothing is visible
  // to the reader before Commit(). At most one reservation at a time.
  StatusOr<std::optional<ShmSlot>> TryReserve(size_t size);
  void Commit();

  // True once the reader has detached or its process no longer exists:
  // what it holds will not be released.
  bool ReaderGone() const;
  // True once a reader has attached, even if it is gone since.
  bool ReaderAttached() const;
  // True once the reader has marked itself detached; unlike ReaderGone(),
  // no system call.
  bool ReaderDetached() const;

 private:
  explicit ShmRingWriter(ShmSegment& segment);

  ShmSegment& segment_;
  shm_layout::RingControl& ring_;
  uint8_t* const data_;
  const uint64_t capacity_;
  const size_t max_message_bytes_;
  uint64_t tail_ = 0;      // this side's copy of ring_.tail
  uint64_t sequence_ = 0;  // the next message's
  // The reservation waiting for Commit(): its record's offset and bytes
  // (0: none) and its payload size.
  uint64_t reserved_offset_ = 0;
  uint64_t reserved_bytes_ = 0;
  size_t reserved_size_ = 0;
};

class ShmRingReader {
 public:
  // FailedPrecondition when the segment's ring has had a reader already.
  static StatusOr<std::unique_ptr<ShmRingReader>> Attach(ShmSegment& segment);
  // Marks the reader detached: the writer's ReaderGone() turns true.
  ~ShmRingReader();
  ShmRingReader(const ShmRingReader&) = delete;
  ShmRingReader& operator=(const ShmRingReader&) = delete;

  // The next message, in place; nullopt when none is published yet. It
  // stays valid, and its space taken, until released. DataLoss, naming the
  // segment, when a record's framing (kind, length, sequence) or the
  // shared positions are corrupt. Messages read before may still be held.
  StatusOr<std::optional<ShmMessage>> TryRead();
  // Releases the oldest message held.
  void Release();
  // Releases the held message `sequence` (a CHECK failure when none is).
  void Release(uint64_t sequence);

  // True once the writer has detached or its process no longer exists: no
  // message will follow those already readable.
  bool WriterGone() const;
  // Marks the reader detached now, as its destruction does: the writer
  // stops writing to this ring. What it holds stays readable.
  void Detach();

 private:
  explicit ShmRingReader(ShmSegment& segment);

  ShmSegment& segment_;
  shm_layout::RingControl& ring_;
  const uint8_t* const data_;
  const uint64_t capacity_;
  // Frees the bytes of the released records at the front of held_.
  void AdvanceHead();

  // A record read and not yet freed: a message held, or a padding record
  // behind one (released from the start).
  struct Held {
    uint64_t sequence;
    uint64_t end;  // the position just past the record
    bool released;
  };

  uint64_t head_ = 0;      // this side's copy of ring_.head: what is freed
  uint64_t read_ = 0;      // the position of the next record to read
  uint64_t sequence_ = 0;  // the next message's expected
  std::deque<Held> held_;  // in ring order
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SHM_RING_H_
