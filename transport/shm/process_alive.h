// Whether a process still exists: how a segment's creator, a ring's writer
// and its reader are known to be gone after a crash or SIGKILL.
#ifndef PST_TRANSPORT_SHM_PROCESS_ALIVE_H_
#define PST_TRANSPORT_SHM_PROCESS_ALIVE_H_

#include <sys/types.h>

namespace pst {

// False when no process `pid` exists (kill(pid, 0) fails with ESRCH) and for
// pid <= 0, which names no single process. A process of another user (EPERM)
// and an unreaped zombie count as alive; so does a pid the system has since
// given to another process, which errs on the side of keeping a segment.
bool ProcessAlive(pid_t pid);

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_PROCESS_ALIVE_H_
