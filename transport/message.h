// Messages: what a sender fills in (OutgoingMessage) and what a receiver
// reads (ReceivedMessage, verified). No ZeroMQ types: how a message is cut
// into frames and verified back is transport/frames.h, the transport's own.
#ifndef PST_TRANSPORT_MESSAGE_H_
#define PST_TRANSPORT_MESSAGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::StreamProgress>>> streams;
  flatbuffers::Offset<wire::FileReport> file;
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

// The frames a received message owns (transport/frames.h).
struct MessageFrames;

// A verified message (transport/frames.h's DecodeMessage makes one). Owns
// its frames; header() and tensor views point into them, or, for a payload
// read in place from a shared-memory ring, into the ring (the message then
// keeps that payload from being reused until it is dropped).
class ReceivedMessage {
 public:
  ReceivedMessage();
  ReceivedMessage(ReceivedMessage&&) noexcept;
  ReceivedMessage& operator=(ReceivedMessage&&) noexcept;
  ~ReceivedMessage();

  const wire::Header& header() const { return *header_; }
  wire::MessageType type() const { return header_->type(); }
  uint64_t request_id() const { return header_->request_id(); }
  int64_t step() const { return header_->step(); }
  // The status a reply carries (OK for requests).
  Status status() const;
  const std::vector<TensorView>& tensors() const { return tensors_; }
  size_t total_bytes() const { return total_bytes_; }

 private:
  friend class MessageDecoder;
  std::unique_ptr<MessageFrames> frames_;
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

// The tensor bytes of a message laid out in one buffer (a shared-memory
// payload): tensor i starts at the first multiple of kInPlaceAlign at or
// after the end of tensor i-1, the first at 0; no bytes follow the last.
inline constexpr size_t kInPlaceAlign = 64;

// The ResourceExhausted refusal of a message over max_message_bytes.
Status MessageTooLarge(size_t max_message_bytes);

// Largest dimension / rank accepted in a descriptor; guards the size
// arithmetic against overflow.
constexpr int kMaxRank = 8;
constexpr int64_t kMaxDim = int64_t{1} << 40;

wire::DataType ToWire(DType dtype);
// InvalidArgument "unknown dtype N" for a value this build does not know.
StatusOr<DType> FromWire(wire::DataType dtype);

}  // namespace pst

#endif  // PST_TRANSPORT_MESSAGE_H_
