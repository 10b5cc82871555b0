// Whether ZmqTransport moves tensor payloads through shared memory between
// tasks on one host (docs/SHARED_MEMORY.md), and how large its rings are.
#ifndef PST_TRANSPORT_SHM_OPTIONS_H_
#define PST_TRANSPORT_SHM_OPTIONS_H_

#include <cstddef>
#include <string>

#include "common/status.h"

namespace pst {

enum class ShmMode {
  kOff,   // TCP only
  kAuto,  // shared memory to a server whose endpoint is on this host
};

struct ShmOptions {
  ShmMode mode = ShmMode::kOff;
  // Bytes of each ring (one per direction per connection that carries
  // tensors), taken from /dev/shm when the connection first carries one
  // (halved while the pair would take over half of what is free there:
  // shm/ring_size.h); a message larger than a ring goes over TCP.
  size_t ring_bytes = size_t{16} << 20;
};

// "auto" or "off"; InvalidArgument naming --shm otherwise.
StatusOr<ShmMode> ParseShmMode(const std::string& text);

// What every ZmqTransport of this process starts from: mode auto, unless
// the environment variable PST_SHM says "off" (how a test run turns shared
// memory off for every task it starts) or SetDefaultShmMode changed it.
ShmOptions DefaultShmOptions();
// --shm, once parsed (cli/). Thread-safe.
void SetDefaultShmMode(ShmMode mode);

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_OPTIONS_H_
