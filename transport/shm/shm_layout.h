// The bytes of a pstrain shared-memory segment, as both processes see them:
//
//   offset 0                SegmentHeader (identity, geometry, RingControl)
//   kSegmentHeaderBytes     the ring's data area, `capacity` bytes
//
// Internal to transport/shm: ShmSegment writes the identity, ShmRingWriter and
// ShmRingReader share RingControl and the data area.
#ifndef PST_TRANSPORT_SHM_SHM_LAYOUT_H_
#define PST_TRANSPORT_SHM_SHM_LAYOUT_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace pst {
namespace shm_layout {

// "pstshm" then the byte order mark 0x0102: a segment of another program or
// another endianness fails the check.
constexpr uint64_t kMagic = 0x7073747368'6d0102ULL;
// Bumped whenever a field below or the record framing changes meaning.
constexpr uint32_t kLayoutVersion = 1;
constexpr size_t kCacheLine = 64;

// Two processes share these atomics, which works only when they are lock-free
// (a lock would live in one process's memory, not in the segment).
static_assert(std::atomic<uint64_t>::is_always_lock_free, "ring positions need lock-free atomics");
static_assert(std::atomic<int64_t>::is_always_lock_free, "ring pids need lock-free atomics");

// Positions are byte counts since the segment was made, never wrapped: a
// record starts at data[position % capacity]. tail - head is what the
// reader has not released yet, at most `capacity`.
//
// A ring serves one writer and one reader for its whole life, so the
// sequence numbers and positions start at 0 and need no recovery. Their pid
// fields go 0 (none yet) -> the attached process's pid -> kDetached.
constexpr int64_t kDetached = -1;
struct RingControl {
  // Written by the writer only; released after a whole record is written.
  alignas(kCacheLine) std::atomic<uint64_t> tail{0};
  std::atomic<int64_t> writer_pid{0};
  // Written by the reader only; released after it is done with a record.
  alignas(kCacheLine) std::atomic<uint64_t> head{0};
  std::atomic<int64_t> reader_pid{0};
};

struct SegmentHeader {
  // Stored last (release) by the creator, so a header with the right magic
  // is complete.
  std::atomic<uint64_t> magic{0};
  uint32_t layout_version = 0;
  uint32_t header_bytes = 0;
  uint64_t cluster_id = 0;
  int64_t creator_pid = 0;
  uint64_t capacity = 0;      // bytes of the data area
  uint64_t record_align = 0;  // every record starts at a multiple of this
  RingControl ring;
};

static_assert(std::is_standard_layout<SegmentHeader>::value, "shared with another process");

constexpr size_t kSegmentHeaderBytes =
    (sizeof(SegmentHeader) + kCacheLine - 1) / kCacheLine * kCacheLine;

// Each record in the data area starts with this header; a message's payload
// follows it, a padding record's bytes are skipped.
enum RecordKind : uint32_t { kMessageRecord = 0x4d534731, kPaddingRecord = 0x50414431 };
struct RecordHeader {
  uint64_t sequence;  // messages only: 0, 1, 2, ... in publishing order
  uint32_t length;    // payload bytes (a padding record: 0)
  uint32_t kind;      // RecordKind
};
constexpr size_t kRecordAlign = 16;
static_assert(sizeof(RecordHeader) == kRecordAlign, "a record header fills one alignment unit");
static_assert(std::is_trivially_copyable<RecordHeader>::value, "records are plain bytes");

// Bytes a record with `payload` bytes takes, header and padding included.
constexpr uint64_t RecordBytes(uint64_t payload) {
  return (sizeof(RecordHeader) + payload + kRecordAlign - 1) / kRecordAlign * kRecordAlign;
}

}  // namespace shm_layout
}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SHM_LAYOUT_H_
