#include "transport/shm/stale_segments.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "transport/shm/process_alive.h"
#include "transport/shm/shm_name.h"

namespace pst {
namespace {

// Where glibc's shm_open keeps POSIX shared memory on Linux.
constexpr char kShmDir[] = "/dev/shm";

// The cluster's entries whose creator is gone, read before any is unlinked
// so that the folder does not change under readdir.
StatusOr<std::vector<std::string>> DeadCreatorsEntries(uint64_t cluster_id) {
  DIR* dir = ::opendir(kShmDir);
  if (dir == nullptr) return FileError(std::string("cannot list ") + kShmDir, errno);
  std::vector<std::string> entries;
  while (const dirent* entry = ::readdir(dir)) {
    const std::optional<ShmNameParts> parts = ParseShmSegmentName(entry->d_name);
    if (!parts || parts->cluster_id != cluster_id || ProcessAlive(parts->creator)) continue;
    entries.push_back(entry->d_name);
  }
  ::closedir(dir);
  return entries;
}

}  // namespace

StatusOr<int> CleanStaleSegments(uint64_t cluster_id) {
  PST_ASSIGN_OR_RETURN(const std::vector<std::string> entries, DeadCreatorsEntries(cluster_id));
  int removed = 0;
  for (const std::string& entry : entries) {
    const std::string path = std::string(kShmDir) + "/" + entry;
    struct stat info;
    // lstat: a symbolic link someone planted is not a segment to follow.
    if (::lstat(path.c_str(), &info) != 0) {
      if (errno == ENOENT) continue;  // another task of the job cleaned it first
      return FileError("cannot stat " + path, errno);
    }
    // A segment, or the named pipe beside it (shm_bell.h).
    const bool ours = S_ISREG(info.st_mode) || S_ISFIFO(info.st_mode);
    if (!ours || info.st_uid != ::geteuid()) continue;
    if (::shm_unlink(("/" + entry).c_str()) != 0) {
      if (errno == ENOENT) continue;
      return FileError("cannot remove stale shared-memory segment " + path, errno);
    }
    ++removed;
  }
  return removed;
}

}  // namespace pst
