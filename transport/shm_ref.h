// The frame that tells a receiver a message's payload is in shared memory
// (docs/SHARED_MEMORY.md). It goes before the FlatBuffers header frame:
//
//   offer:   [ref, header, tensor frames...]  payload over TCP; the sender
//            offers its two rings, the receiver may attach them
//   payload: [ref, header]                    payload is ring message
//            `sequence` of the sender's ring
//
// A ref starts with 8 magic bytes that no header frame can start with (a
// header starts with its root offset, far smaller than those bytes read as
// a number), so a message without a ref is decoded exactly as before.
#ifndef PST_TRANSPORT_SHM_REF_H_
#define PST_TRANSPORT_SHM_REF_H_

#include <cstdint>
#include <string>
#include <zmq.hpp>

#include "common/status.h"

namespace pst {

enum class ShmRefKind : uint32_t { kOffer = 1, kPayload = 2 };

struct ShmRef {
  ShmRefKind kind = ShmRefKind::kPayload;
  uint64_t sequence = 0;  // kPayload: the ring message holding the payload
  // The client's two segments: requests (client to server), replies.
  std::string request_ring;
  std::string reply_ring;
};

zmq::message_t EncodeShmRef(const ShmRef& ref);
// Whether `frame` starts with a ref's magic (then it is no header).
bool IsShmRef(const zmq::message_t& frame);
// InvalidArgument when a frame with the magic is not a well-formed ref.
StatusOr<ShmRef> DecodeShmRef(const zmq::message_t& frame);

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_REF_H_
