#include "transport/shm/shm_bell.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "transport/shm/shm_name.h"

namespace pst {
namespace {

constexpr mode_t kBellMode = 0600;
constexpr size_t kLengthBytes = sizeof(uint32_t);

std::string PathOf(const std::string& name) { return "/dev/shm" + name; }

Status CheckName(const std::string& name) {
  if (name.size() < 2 || name[0] != '/' || !ParseShmSegmentName(name.substr(1))) {
    return InvalidArgument("'" + name + "' is not a pstrain shared-memory name");
  }
  return Status::OK();
}

// What a pipe must be for this process to trust it: a pipe of its user,
// readable and writable by that user alone.
Status CheckOwnPipe(const struct stat& info, const std::string& name) {
  if (!S_ISFIFO(info.st_mode)) return PermissionDenied(name + " is not a named pipe");
  if (info.st_uid != ::geteuid()) return PermissionDenied(name + " belongs to another user");
  if ((info.st_mode & 0777) != kBellMode) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%03o", static_cast<unsigned>(info.st_mode & 0777));
    return PermissionDenied(name + " has mode " + mode + ", not 600");
  }
  return Status::OK();
}

}  // namespace

size_t ShmBell::max_record_bytes() { return PIPE_BUF - kLengthBytes; }

StatusOr<std::unique_ptr<ShmBell>> ShmBell::Create(const std::string& name) {
  PST_RETURN_IF_ERROR(CheckName(name));
  const std::string path = PathOf(name);
  if (::mkfifo(path.c_str(), kBellMode) != 0) {
    return FileError("cannot make the named pipe " + path, errno);
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  // The umask may have taken bits off the mode; only this user's are wanted.
  if (fd < 0 || ::fchmod(fd, kBellMode) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
    return FileError("cannot open the named pipe " + path, error);
  }
  return std::unique_ptr<ShmBell>(new ShmBell(name, fd, ::getpid()));
}

StatusOr<std::unique_ptr<ShmBell>> ShmBell::Open(const std::string& name) {
  PST_RETURN_IF_ERROR(CheckName(name));
  const std::string path = PathOf(name);
  // Checked before opening too: opening a device or a stranger's file may
  // itself do something.
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return NotFound("no named pipe " + path);
    return FileError("cannot open " + path, errno);
  }
  PST_RETURN_IF_ERROR(CheckOwnPipe(info, path));
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return FileError("cannot open " + path, errno);
  Status checked =
      ::fstat(fd, &info) == 0 ? CheckOwnPipe(info, path) : FileError("cannot stat " + path, errno);
  if (!checked.ok()) {
    ::close(fd);
    return checked;
  }
  return std::unique_ptr<ShmBell>(new ShmBell(name, fd, /*unlinking_pid=*/0));
}

ShmBell::ShmBell(std::string name, int fd, pid_t unlinking_pid)
    : name_(std::move(name)), fd_(fd), unlinking_pid_(unlinking_pid) {}

ShmBell::~ShmBell() {
  Unlink();
  ::close(fd_);
}

void ShmBell::Unlink() {
  if (unlinking_pid_ != 0 && unlinking_pid_ == ::getpid()) ::unlink(PathOf(name_).c_str());
  unlinking_pid_ = 0;
}

bool ShmBell::TrySend(const std::vector<iovec>& parts) {
  size_t bytes = 0;
  for (const iovec& part : parts) bytes += part.iov_len;
  if (bytes > max_record_bytes()) return false;
  const uint32_t length = static_cast<uint32_t>(bytes);
  std::vector<iovec> record;
  record.reserve(parts.size() + 1);
  record.push_back({const_cast<uint32_t*>(&length), kLengthBytes});
  record.insert(record.end(), parts.begin(), parts.end());
  const ssize_t written = ::writev(fd_, record.data(), static_cast<int>(record.size()));
  if (written < 0) return false;  // EAGAIN: full; anything else: not this way
  // A pipe takes a write of at most PIPE_BUF bytes whole or not at all.
  CHECK_EQ(static_cast<size_t>(written), bytes + kLengthBytes) << name_;
  return true;
}

StatusOr<std::optional<std::string>> ShmBell::TryReceive() {
  for (;;) {
    if (pending_.size() >= kLengthBytes) {
      uint32_t length;
      std::memcpy(&length, pending_.data(), kLengthBytes);
      if (length > max_record_bytes()) {
        pending_.clear();
        return DataLoss("named pipe " + name_ + " holds a record of " + std::to_string(length) +
                        " bytes, over the " + std::to_string(max_record_bytes()) + " a record has");
      }
      if (pending_.size() >= kLengthBytes + length) {
        std::string record = pending_.substr(kLengthBytes, length);
        pending_.erase(0, kLengthBytes + length);
        return std::optional<std::string>(std::move(record));
      }
    }
    char chunk[PIPE_BUF * 4];
    const ssize_t got = ::read(fd_, chunk, sizeof(chunk));
    if (got <= 0) return std::optional<std::string>();  // EAGAIN: nothing waits
    pending_.append(chunk, static_cast<size_t>(got));
  }
}

}  // namespace pst
