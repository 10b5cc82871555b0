// How large a new link's rings are, from what /dev/shm has free.
//
// A link takes two rings (request and reply) when it first carries a
// tensor, and a task cannot know how many links this host's tasks will
// open after it. So a link takes at most half of what is free, halving the
// rings it would like until they fit, and leaves the rest to the links still
// to come: Docker's default 64 MiB /dev/shm then holds 16, 8, 4, 2 and
// 1 MiB pairs, where 16 MiB rings fitted one pair (docs/DEPLOYMENT.md).
#ifndef PST_TRANSPORT_SHM_RING_SIZE_H_
#define PST_TRANSPORT_SHM_RING_SIZE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pst {

// Rings smaller than this are not worth a link: it goes over TCP.
inline constexpr size_t kMinRingBytes = size_t{1} << 20;

// The bytes of each of the pair's rings: `wanted`, halved while the pair
// would take more than half of `free_bytes`, but not below kMinRingBytes
// (nor below `wanted`, when that is smaller): 0 when that does not fit.
size_t RingBytesFor(size_t wanted, uint64_t free_bytes);

// The bytes an unprivileged task may still take in the file system at
// `dir` (statvfs's f_bavail), or nothing when it cannot be read.
std::optional<uint64_t> FreeBytesAt(const std::string& dir);

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_RING_SIZE_H_
