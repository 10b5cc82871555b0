// Tensor payloads in a shared-memory ring, for both ends of a connection
// (docs/SHARED_MEMORY.md): writing a message's tensor frames into the
// sender's ring, and reading them in place on the other side.
#ifndef PST_TRANSPORT_SHM_PAYLOAD_H_
#define PST_TRANSPORT_SHM_PAYLOAD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>
#include <zmq.hpp>

#include "common/mutex.h"
#include "common/status.h"
#include "transport/message.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"

namespace pst {

// Copies the tensor frames frames[1..] (frames[0] is the header) into the
// ring as one message (layout: message.h, InPlacePayloadBytes) and returns
// its sequence number; nullopt when the ring has no room for it now (full,
// or the payload is larger than the ring): the caller sends it over TCP.
// `*next_sequence` counts the messages written, as the ring numbers them.
StatusOr<std::optional<uint64_t>> WritePayload(ShmRingWriter& writer,
                                               const std::vector<zmq::message_t>& frames,
                                               uint64_t* next_sequence);

// The reading end of one ring, shared by the messages decoded from it: each
// holds its payload in place until it is dropped, on any thread.
//
// Thread safety: all methods are thread-safe.
class ShmInbox : public std::enable_shared_from_this<ShmInbox> {
 public:
  // Attaches the reader of `segment`, which the inbox then owns.
  static StatusOr<std::shared_ptr<ShmInbox>> Attach(std::unique_ptr<ShmSegment> segment);
  ShmInbox(const ShmInbox&) = delete;
  ShmInbox& operator=(const ShmInbox&) = delete;

  // Decodes `header_frame` with ring message `sequence` as its payload, read
  // in place. Earlier messages nobody asked for (their sender's TCP send
  // failed after writing them) are released on the way. DataLoss when
  // message `sequence` is not in the ring or the ring is corrupt.
  StatusOr<ReceivedMessage> Decode(zmq::message_t header_frame, uint64_t sequence,
                                   size_t max_message_bytes);

  // Removes the segment's name when this process created it (ShmSegment::
  // Unlink). Called by one thread, the one that attached it.
  void Unlink() { segment_->Unlink(); }

  // True once the writer detached or its process is gone.
  bool WriterGone() const;
  // Tells the writer to stop (ShmRingReader::Detach): the client then
  // starts over with new segments.
  void Detach();
  const std::string& name() const { return segment_->name(); }

 private:
  ShmInbox(std::unique_ptr<ShmSegment> segment, std::unique_ptr<ShmRingReader> reader);
  void Release(uint64_t sequence);

  const std::unique_ptr<ShmSegment> segment_;
  mutable Mutex mu_;
  const std::unique_ptr<ShmRingReader> reader_ PT_GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_PAYLOAD_H_
