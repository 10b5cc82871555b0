// The names of the shared-memory segments: "/pst-<cluster id, 16 hex
// digits>-<creator pid>-<purpose>", so that a segment says which job made it
// and which process must be alive for it to be in use.
#ifndef PST_TRANSPORT_SHM_SHM_NAME_H_
#define PST_TRANSPORT_SHM_SHM_NAME_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace pst {

// "/pst-00000000000000ff-1234-push.0". InvalidArgument when `purpose` is
// empty, longer than 128 characters, or holds a character other than
// [A-Za-z0-9._-].
StatusOr<std::string> ShmSegmentName(uint64_t cluster_id, pid_t creator,
                                     const std::string& purpose);

// The start every segment of `cluster_id` has in /dev/shm: "pst-<16 hex>-".
std::string ShmClusterPrefix(uint64_t cluster_id);

struct ShmNameParts {
  uint64_t cluster_id = 0;
  pid_t creator = 0;
};

// The parts of a /dev/shm entry's name (without the leading '/'); nullopt
// for a name that is not a pstrain segment's.
std::optional<ShmNameParts> ParseShmSegmentName(const std::string& entry);

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SHM_NAME_H_
