// Messages on the wire: encoding an outgoing message into ZeroMQ frames and
// decoding + verifying received frames.
//
// Frame 0 is a FlatBuffers wire::Header; frame i (i >= 1) holds the raw bytes
// of header.tensors[i-1]. Tensor bytes are sent zero-copy: the frame keeps a
// reference to the Tensor's buffer until ZeroMQ is done with it, so the caller
// must not modify a tensor after handing it to EncodeMessage.
#ifndef PST_TRANSPORT_MESSAGE_H_
#define PST_TRANSPORT_MESSAGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "common/tensor.h"
#include "schema/messages_generated.h"

namespace pst {

struct OutTensor {
  std::string name;
  int64_t version = 0;
  Tensor tensor;
  wire::TensorRole role = wire::TensorRole::Value;  // see schema/messages.fbs
};

// Optional typed parts of a header. They must be built in the builder before
// the header table itself, hence a callback.
struct HeaderExtras {
  flatbuffers::Offset<wire::InitParams> init;
  flatbuffers::Offset<wire::PushParams> push;
  flatbuffers::Offset<wire::PushResult> push_result;
  flatbuffers::Offset<wire::ShardStats> shard_stats;
  flatbuffers::Offset<wire::JoinInfo> join;
  flatbuffers::Offset<wire::Report> report;
  flatbuffers::Offset<wire::CheckpointParams> checkpoint;
  flatbuffers::Offset<wire::ReplicaRoute> replica;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::Chain>>> chains;
};
using ExtrasBuilder = std::function<HeaderExtras(flatbuffers::FlatBufferBuilder&)>;

// What a sender fills in; the transport adds the envelope.
struct OutgoingMessage {
  wire::MessageType type = wire::MessageType::Invalid;
  int64_t step = 0;
  Status status;
  std::vector<OutTensor> tensors;
  std::vector<std::string> names;  // PullRequest: variables wanted
  // PullRequest: the dtype float32 variables should come back in
  // (kFloat32 or kBFloat16).
  DType pull_dtype = DType::kFloat32;
  ExtrasBuilder extras;  // may be empty
};

// Who sends, and in answer to what.
struct Envelope {
  uint64_t request_id = 0;
  uint64_t cluster_id = 0;
  wire::Role role = wire::Role::Unknown;
  int32_t index = 0;
  // Requests to a ps: the named container they are about ("": the default).
  std::string_view container;
};

std::vector<zmq::message_t> EncodeMessage(const OutgoingMessage& message, const Envelope& envelope);

// A tensor inside a received message: points into the received frame.
struct TensorView {
  std::string_view name;
  DType dtype;
  Shape shape;
  int64_t version;
  const void* data;
  size_t num_bytes;
  wire::TensorRole role = wire::TensorRole::Value;
  int64_t num_elements() const { return NumElements(shape); }
  const float* f32() const { return static_cast<const float*>(data); }
  const int64_t* i64() const { return static_cast<const int64_t*>(data); }
  const uint16_t* bf16() const { return static_cast<const uint16_t*>(data); }
  Tensor ToTensor() const;  // copies
};

// A verified message. Owns its frames; header() and tensor views point into
// them, or, for a payload read in place from a shared-memory ring, into the
// ring (the message then keeps that payload from being reused until it is
// dropped).
class ReceivedMessage {
 public:
  ReceivedMessage() = default;
  ReceivedMessage(ReceivedMessage&&) = default;
  ReceivedMessage& operator=(ReceivedMessage&&) = default;

  const wire::Header& header() const { return *header_; }
  wire::MessageType type() const { return header_->type(); }
  uint64_t request_id() const { return header_->request_id(); }
  int64_t step() const { return header_->step(); }
  // The status a reply carries (OK for requests).
  Status status() const;
  const std::vector<TensorView>& tensors() const { return tensors_; }
  size_t total_bytes() const { return total_bytes_; }

 private:
  friend StatusOr<ReceivedMessage> DecodeMessage(std::vector<zmq::message_t>, size_t);
  friend StatusOr<ReceivedMessage> DecodeMessageInPlace(zmq::message_t, const uint8_t*, size_t,
                                                        std::shared_ptr<const void>, size_t);
  std::vector<zmq::message_t> frames_;
  // What keeps an in-place payload valid (a shared-memory ring's hold on
  // it); released with the message.
  std::shared_ptr<const void> payload_owner_;
  // Copies of the frames whose bytes were not 8-byte aligned (ZeroMQ hands
  // frames over anywhere in its buffers), in one block: typed reads need
  // aligned memory.
  std::unique_ptr<uint64_t[]> aligned_copies_;
  const wire::Header* header_ = nullptr;
  std::vector<TensorView> tensors_;
  size_t total_bytes_ = 0;
};

// What a frame costs a receiver, as counted against max_message_bytes: its
// bytes plus the zmq_msg_t that holds it, so that a message of a million
// empty frames is limited like one of a few big ones.
inline size_t FrameCost(size_t frame_bytes) { return frame_bytes + sizeof(zmq_msg_t); }

// Verifies frames (header with the FlatBuffers Verifier, every tensor frame
// against its descriptor, the frames' total FrameCost against
// max_message_bytes) and returns the message, or InvalidArgument /
// ResourceExhausted saying what is wrong.
StatusOr<ReceivedMessage> DecodeMessage(std::vector<zmq::message_t> frames,
                                        size_t max_message_bytes);
// The tensor bytes of a message laid out in one buffer (a shared-memory
// payload): tensor i starts at the first multiple of kInPlaceAlign at or
// after the end of tensor i-1, the first at 0; no bytes follow the last.
inline constexpr size_t kInPlaceAlign = 64;
// The payload's size for tensor frames frames[first..].
size_t InPlacePayloadBytes(const std::vector<zmq::message_t>& frames, size_t first);
// Copies tensor frames frames[first..] into `out` (InPlacePayloadBytes bytes).
void CopyInPlacePayload(const std::vector<zmq::message_t>& frames, size_t first, uint8_t* out);

// DecodeMessage for a header frame whose tensors are in `payload`, laid out
// as above: the same checks, the same costs against max_message_bytes (as
// if each tensor were a frame), and views into `payload`, which
// `payload_owner` keeps valid for as long as the message lives.
StatusOr<ReceivedMessage> DecodeMessageInPlace(zmq::message_t header_frame, const uint8_t* payload,
                                               size_t payload_bytes,
                                               std::shared_ptr<const void> payload_owner,
                                               size_t max_message_bytes);

// The ResourceExhausted refusal of a message over max_message_bytes.
Status MessageTooLarge(size_t max_message_bytes);

// Largest dimension / rank accepted in a descriptor; guards the size
// arithmetic against overflow.
constexpr int kMaxRank = 8;
constexpr int64_t kMaxDim = int64_t{1} << 40;

wire::DataType ToWire(DType dtype);
// InvalidArgument "unknown dtype N" for a value this build does not know.
StatusOr<DType> FromWire(wire::DataType dtype);

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

#endif  // PST_TRANSPORT_MESSAGE_H_
