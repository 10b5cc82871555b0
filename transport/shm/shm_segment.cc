#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <new>
#include <utility>

#include "transport/shm/shm_name.h"

namespace pst {
namespace {

using shm_layout::kSegmentHeaderBytes;
using shm_layout::SegmentHeader;

constexpr mode_t kSegmentMode = 0600;

// Closes the descriptor on every path: the mapping outlives it.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  const int fd_;
};

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016" PRIx64, value);
  return text;
}

// MAP_POPULATE: the ring's pages are mapped now, at connection time, not
// one page fault at a time on the first pass through the ring, which
// would land on the first steps' pushes and pulls (a fault per 4 KiB on
// each side).
StatusOr<uint8_t*> Map(int fd, size_t bytes, const std::string& name) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (base == MAP_FAILED) return FileError("cannot map shared-memory segment " + name, errno);
  return static_cast<uint8_t*>(base);
}

// Why a mapped segment's header does not fit this reader; OK when it does.
Status CheckHeader(const SegmentHeader& header, size_t file_bytes, uint64_t cluster_id,
                   const std::string& name) {
  if (header.magic.load(std::memory_order_acquire) != shm_layout::kMagic) {
    return InvalidArgument("shared-memory segment " + name + " is not a pstrain segment (magic)");
  }
  if (header.layout_version != shm_layout::kLayoutVersion ||
      header.header_bytes != kSegmentHeaderBytes ||
      header.record_align != shm_layout::kRecordAlign) {
    return InvalidArgument("shared-memory segment " + name + " has layout version " +
                           std::to_string(header.layout_version) + ", this build reads " +
                           std::to_string(shm_layout::kLayoutVersion));
  }
  if (header.capacity == 0 || header.capacity % shm_layout::kRecordAlign != 0 ||
      header.capacity != file_bytes - kSegmentHeaderBytes) {
    return InvalidArgument("shared-memory segment " + name + " is " + std::to_string(file_bytes) +
                           " bytes, its header says a ring of " + std::to_string(header.capacity));
  }
  if (header.cluster_id != cluster_id) {
    return PermissionDenied("shared-memory segment " + name + " belongs to cluster " +
                            Hex(header.cluster_id) + ", not " + Hex(cluster_id));
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::Create(uint64_t cluster_id,
                                                         const std::string& purpose,
                                                         size_t capacity) {
  if (capacity == 0 || capacity % shm_layout::kRecordAlign != 0 ||
      capacity > SIZE_MAX - kSegmentHeaderBytes) {
    return InvalidArgument("shared-memory ring capacity must be a positive multiple of 16, not " +
                           std::to_string(capacity));
  }
  const pid_t self = ::getpid();
  PST_ASSIGN_OR_RETURN(const std::string name, ShmSegmentName(cluster_id, self, purpose));
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, kSegmentMode);
  if (fd < 0) return FileError("cannot create shared-memory segment " + name, errno);
  FdCloser closer(fd);
  const size_t bytes = kSegmentHeaderBytes + capacity;
  // fchmod: the umask may have taken bits off the mode the peer checks for.
  // posix_fallocate, not ftruncate: a full /dev/shm is an error here rather
  // than a SIGBUS at the first write into a page tmpfs cannot supply.
  Status status;
  if (::fchmod(fd, kSegmentMode) != 0) {
    status = FileError("cannot set the mode of shared-memory segment " + name, errno);
  } else if (const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    status = FileError("cannot size shared-memory segment " + name, error);
  }
  StatusOr<uint8_t*> base = status.ok() ? Map(fd, bytes, name) : StatusOr<uint8_t*>(status);
  if (!base.ok()) {
    ::shm_unlink(name.c_str());
    return base.status();
  }
  auto* header = new (*base) SegmentHeader();
  header->layout_version = shm_layout::kLayoutVersion;
  header->header_bytes = kSegmentHeaderBytes;
  header->cluster_id = cluster_id;
  header->creator_pid = self;
  header->capacity = capacity;
  header->record_align = shm_layout::kRecordAlign;
  header->magic.store(shm_layout::kMagic, std::memory_order_release);
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, *base, bytes, self));
}

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::Open(const std::string& name,
                                                       uint64_t cluster_id) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound("no shared-memory segment " + name);
    return FileError("cannot open shared-memory segment " + name, errno);
  }
  FdCloser closer(fd);
  struct stat info;
  if (::fstat(fd, &info) != 0) return FileError("cannot stat shared-memory segment " + name, errno);
  // Another user's segment could be read or written by that user behind
  // this process's back; a wider mode by anyone on the host.
  if (info.st_uid != ::geteuid()) {
    return PermissionDenied("shared-memory segment " + name + " belongs to uid " +
                            std::to_string(info.st_uid) + ", not " + std::to_string(::geteuid()));
  }
  if ((info.st_mode & 07777) != kSegmentMode) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return PermissionDenied("shared-memory segment " + name + " has mode " + mode + ", not 0600");
  }
  const size_t bytes = static_cast<size_t>(info.st_size);
  if (info.st_size < static_cast<off_t>(kSegmentHeaderBytes)) {
    return InvalidArgument("shared-memory segment " + name + " is " + std::to_string(bytes) +
                           " bytes, too small for its header");
  }
  PST_ASSIGN_OR_RETURN(uint8_t* const base, Map(fd, bytes, name));
  const Status fits =
      CheckHeader(*reinterpret_cast<const SegmentHeader*>(base), bytes, cluster_id, name);
  if (!fits.ok()) {
    ::munmap(base, bytes);
    return fits;
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, base, bytes, 0));
}

ShmSegment::ShmSegment(std::string name, uint8_t* base, size_t mapped_bytes, pid_t unlinking_pid)
    : name_(std::move(name)),
      base_(base),
      mapped_bytes_(mapped_bytes),
      header_(reinterpret_cast<SegmentHeader*>(base)),
      unlinking_pid_(unlinking_pid) {}

ShmSegment::~ShmSegment() {
  Unlink();
  ::munmap(base_, mapped_bytes_);
}

void ShmSegment::Unlink() {
  if (unlinking_pid_ != 0 && unlinking_pid_ == ::getpid()) ::shm_unlink(name_.c_str());
  unlinking_pid_ = 0;
}

}  // namespace pst
