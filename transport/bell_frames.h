// A message's frames as one ShmBell record (docs/SHARED_MEMORY.md): what
// would go over ZeroMQ (a ref and a header, or a header alone) when it is
// short enough for the pipe. The record is a 4-byte frame count, each
// frame's 4-byte length, then the frames' bytes.
#ifndef PST_TRANSPORT_BELL_FRAMES_H_
#define PST_TRANSPORT_BELL_FRAMES_H_

#include <optional>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "transport/shm/shm_bell.h"

namespace pst {

// false when the frames do not fit one record or the pipe is full now
// (nothing sent): the caller sends them over ZeroMQ.
bool SendFramesOverBell(ShmBell& bell, const std::vector<zmq::message_t>& frames);

// The next message's frames; nullopt when none waits. DataLoss when the
// pipe's record is not a well-formed list of frames.
StatusOr<std::optional<std::vector<zmq::message_t>>> ReceiveFramesFromBell(ShmBell& bell);

}  // namespace pst

#endif  // PST_TRANSPORT_BELL_FRAMES_H_
