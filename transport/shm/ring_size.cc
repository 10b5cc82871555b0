#include "transport/shm/ring_size.h"

#include <sys/statvfs.h>

#include <algorithm>

namespace pst {

size_t RingBytesFor(size_t wanted, uint64_t free_bytes) {
  const size_t least = std::min(wanted, kMinRingBytes);
  size_t ring = wanted;
  while (ring > 0 && ring >= least && 2 * uint64_t{ring} > free_bytes / 2) ring /= 2;
  return ring >= least ? ring : 0;
}

std::optional<uint64_t> FreeBytesAt(const std::string& dir) {
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
  return uint64_t{fs.f_bavail} * fs.f_frsize;
}

}  // namespace pst
