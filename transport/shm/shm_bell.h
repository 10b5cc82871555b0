// ShmBell: short records from one process to another on the same host,
// through a named pipe beside the shared-memory segments, whose descriptor
// the reader polls: the doorbell that lets a message's header skip
// ZeroMQ's I/O threads (docs/SHARED_MEMORY.md, "Headers through bells").
//
// A record is written by one write() of at most PIPE_BUF bytes, which the
// kernel keeps whole: a reader never sees half a record, and a full pipe
// refuses the record instead of taking part of it. The pipe holds only
// whole records, each a 4-byte length and the bytes.
//
// Naming and cleanup are the segments' (shm_segment.h): the creator makes
// "/dev/shm/pst-<cluster id>-<its pid>-<purpose>" with mode 0600, the peer
// opens it by name and refuses one of another user, another mode or
// another type; the creator unlinks the name once the peer has opened it
// (or at destruction), and CleanStaleSegments removes what a killed
// creator left. Both ends open the pipe for reading and writing, so that
// neither blocks on open nor sees end-of-file while the other is away.
//
// Thread safety: none; each end is used by one thread at a time.
#ifndef PST_TRANSPORT_SHM_SHM_BELL_H_
#define PST_TRANSPORT_SHM_SHM_BELL_H_

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

class ShmBell {
 public:
  // The most bytes of one record (PIPE_BUF less the length).
  static size_t max_record_bytes();

  // Makes the pipe `name` ("/pst-...", a segment's name, shm_name.h) with
  // mode 0600. A FileError when the system refuses, also when the name
  // exists.
  static StatusOr<std::unique_ptr<ShmBell>> Create(const std::string& name);
  // Opens the existing pipe `name`. NotFound when there is none;
  // PermissionDenied, naming it, when it is not a pipe, belongs to another
  // user or its mode is not 0600.
  static StatusOr<std::unique_ptr<ShmBell>> Open(const std::string& name);

  // Closes; the creating process (not a forked child) also unlinks.
  ~ShmBell();
  ShmBell(const ShmBell&) = delete;
  ShmBell& operator=(const ShmBell&) = delete;

  // Removes the name now (the creator, once the peer has opened it).
  // Idempotent; does nothing for an opened pipe.
  void Unlink();

  const std::string& name() const { return name_; }
  // Readable when a record waits: for poll().
  int fd() const { return fd_; }

  // Writes `parts`, concatenated, as one record. false when it is larger
  // than max_record_bytes() or the pipe has no room for it now (nothing is
  // written then); the caller sends it another way.
  bool TrySend(const std::vector<iovec>& parts);

  // The next record; nullopt when none waits. DataLoss, naming the pipe,
  // when what it holds is not records (a length over the maximum).
  StatusOr<std::optional<std::string>> TryReceive();

 private:
  ShmBell(std::string name, int fd, pid_t unlinking_pid);

  const std::string name_;
  const int fd_;
  pid_t unlinking_pid_;  // the creator, which unlinks; 0 once unlinked
  std::string pending_;  // bytes read, not yet returned as records
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SHM_BELL_H_
