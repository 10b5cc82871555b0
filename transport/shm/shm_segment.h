// ShmSegment: one POSIX shared-memory object holding a ring between two
// processes of the same job on one host (issue 27).
//
// The creator makes "/pst-<cluster id>-<its pid>-<purpose>" with mode 0600
// and a header naming the cluster; the peer opens it by name, and Open
// refuses a segment of another cluster, another user, another mode or
// another layout. The creator's destructor unlinks the name (the memory
// lives on while the peer still maps it); a creator killed before that
// leaves the name to CleanStaleSegments (stale_segments.h).
//
// Thread safety: the accessors are const and safe from any thread; what
// the data area holds is the ring's business (shm_ring.h).
#ifndef PST_TRANSPORT_SHM_SHM_SEGMENT_H_
#define PST_TRANSPORT_SHM_SHM_SEGMENT_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "transport/shm/shm_layout.h"

namespace pst {

class ShmSegment {
 public:
  // Creates and maps a new segment with a data area of `capacity` bytes, a
  // positive multiple of 16. InvalidArgument for a bad purpose (shm_name.h)
  // or capacity; a FileError (e.g. PermissionDenied, ResourceExhausted) when
  // the system refuses, also when the name already exists.
  static StatusOr<std::unique_ptr<ShmSegment>> Create(uint64_t cluster_id,
                                                      const std::string& purpose, size_t capacity);

  // Maps the existing segment `name` ("/pst-..."). NotFound when there is
  // none; PermissionDenied, naming the segment, when it belongs to another
  // user, its mode is not 0600 or its header names another cluster;
  // InvalidArgument when its magic, layout version or size is wrong.
  static StatusOr<std::unique_ptr<ShmSegment>> Open(const std::string& name, uint64_t cluster_id);

  // Unmaps; the creating process (not a child forked from it) also unlinks.
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // The creator removes the name now rather than at destruction: once the
  // peer has mapped the segment nothing opens it again, and a name no
  // longer in /dev/shm is one a SIGKILL cannot leave behind. Idempotent;
  // does nothing for an opened segment.
  void Unlink();

  const std::string& name() const { return name_; }
  uint64_t cluster_id() const { return header_->cluster_id; }
  pid_t creator_pid() const { return static_cast<pid_t>(header_->creator_pid); }
  size_t capacity() const { return header_->capacity; }

  // The ring's shared positions and its data area, valid while this lives.
  shm_layout::RingControl& ring() const { return header_->ring; }
  uint8_t* data() const { return base_ + shm_layout::kSegmentHeaderBytes; }

 private:
  ShmSegment(std::string name, uint8_t* base, size_t mapped_bytes, pid_t unlinking_pid);

  const std::string name_;
  uint8_t* const base_;  // the mapping, owned
  const size_t mapped_bytes_;
  shm_layout::SegmentHeader* const header_;  // at base_
  // The creating process, which unlinks the name; 0 for an opened segment.
  // A pid, not a flag, so that a forked child's copy leaves the name alone.
  // Set to 0 by Unlink().
  pid_t unlinking_pid_;
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SHM_SEGMENT_H_
