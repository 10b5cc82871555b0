// Removing the segments a killed task left behind: a process that dies by
// SIGKILL never runs ShmSegment's destructor, so its names stay in /dev/shm
// until the next start of the same job calls CleanStaleSegments.
#ifndef PST_TRANSPORT_SHM_STALE_SEGMENTS_H_
#define PST_TRANSPORT_SHM_STALE_SEGMENTS_H_

#include <cstdint>

#include "common/status.h"

namespace pst {

// Unlinks every "pst-<cluster_id>-<pid>-*" entry of /dev/shm whose creator
// pid no longer exists and which belongs to this process's user; returns how
// many it unlinked. Never touches another cluster's segments, a live
// process's, another user's, or a name that is not a segment's. A FileError
// when the folder cannot be read or an entry cannot be unlinked.
//
// The pid is in the creator's pid namespace: only tasks that share both
// /dev/shm and a pid namespace (one host, one container) may clean for each
// other. Unlinking never breaks a mapping already made, only later opens.
StatusOr<int> CleanStaleSegments(uint64_t cluster_id);

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_STALE_SEGMENTS_H_
