#include "transport/shm/process_alive.h"

#include <signal.h>

#include <cerrno>

namespace pst {

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

}  // namespace pst
