// Messages on the wire: encoding an outgoing message into ZeroMQ frames and
// decoding + verifying received frames. The transport's own: code above it
// sees OutgoingMessage and ReceivedMessage only (transport/message.h).
//
// Frame 0 is a FlatBuffers wire::Header; frame i (i >= 1) holds the raw bytes
// of header.tensors[i-1]. Tensor bytes are sent zero-copy: the frame keeps a
// reference to the Tensor's buffer until ZeroMQ is done with it, so the caller
// must not modify a tensor after handing it to EncodeMessage.
#ifndef PST_TRANSPORT_FRAMES_H_
#define PST_TRANSPORT_FRAMES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "transport/message.h"

namespace pst {

// The frames a ReceivedMessage owns. zmq::message_t keeps a big frame's
// bytes on the heap and a small one's (up to 33 bytes) inside itself; held
// here, behind the message's pointer, neither moves with the message.
struct MessageFrames {
  std::vector<zmq::message_t> frames;
};

std::vector<zmq::message_t> EncodeMessage(const OutgoingMessage& message, const Envelope& envelope);

// What a frame costs a receiver, as counted against max_message_bytes: its
// bytes plus the zmq_msg_t that holds it, so that a message of a million
// empty frames is limited like one of a few big ones.
inline size_t FrameCost(size_t frame_bytes) { return frame_bytes + sizeof(zmq_msg_t); }

// Makes ReceivedMessages (their friend).
class MessageDecoder {
 public:
  // Verifies frames (header with the FlatBuffers Verifier, every tensor
  // frame against its descriptor, the frames' total FrameCost against
  // max_message_bytes) and returns the message, or InvalidArgument /
  // ResourceExhausted saying what is wrong.
  static StatusOr<ReceivedMessage> Decode(std::vector<zmq::message_t> frames,
                                          size_t max_message_bytes);
  // Decode for a header frame whose tensors are in `payload`, laid out as
  // kInPlaceAlign says: the same checks, the same costs against
  // max_message_bytes (as if each tensor were a frame), and views into
  // `payload`, which `payload_owner` keeps valid for as long as the message
  // lives.
  static StatusOr<ReceivedMessage> DecodeInPlace(zmq::message_t header_frame,
                                                 const uint8_t* payload, size_t payload_bytes,
                                                 std::shared_ptr<const void> payload_owner,
                                                 size_t max_message_bytes);
};

inline StatusOr<ReceivedMessage> DecodeMessage(std::vector<zmq::message_t> frames,
                                               size_t max_message_bytes) {
  return MessageDecoder::Decode(std::move(frames), max_message_bytes);
}
inline StatusOr<ReceivedMessage> DecodeMessageInPlace(zmq::message_t header_frame,
                                                      const uint8_t* payload, size_t payload_bytes,
                                                      std::shared_ptr<const void> payload_owner,
                                                      size_t max_message_bytes) {
  return MessageDecoder::DecodeInPlace(std::move(header_frame), payload, payload_bytes,
                                       std::move(payload_owner), max_message_bytes);
}

// The payload's size for tensor frames frames[first..], laid out as
// kInPlaceAlign says.
size_t InPlacePayloadBytes(const std::vector<zmq::message_t>& frames, size_t first);
// Copies tensor frames frames[first..] into `out` (InPlacePayloadBytes bytes).
void CopyInPlacePayload(const std::vector<zmq::message_t>& frames, size_t first, uint8_t* out);

// The frame's bytes at an 8-byte-aligned address: the frame itself, or a
// copy kept in *storage.
const uint8_t* AlignedBytes(const zmq::message_t& frame, std::unique_ptr<uint64_t[]>* storage);

// The header in `frame` if its FlatBuffers structure verifies (within the
// limits DecodeMessage uses), else nullptr. Its message type is not
// checked, so a message DecodeMessage refuses can still be answered by its
// request id. Unaligned bytes are copied to *storage, which must outlive
// the header.
const wire::Header* VerifiedHeader(const zmq::message_t& frame,
                                   std::unique_ptr<uint64_t[]>* storage);

}  // namespace pst

#endif  // PST_TRANSPORT_FRAMES_H_
