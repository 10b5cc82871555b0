#include "transport/message.h"

#include <cstring>

#include "transport/frames.h"

namespace pst {
namespace {

bool IsAligned(const void* bytes) {
  return reinterpret_cast<uintptr_t>(bytes) % alignof(uint64_t) == 0;
}

// The words of an aligned copy of `bytes` bytes.
size_t CopyWords(size_t bytes) { return bytes / sizeof(uint64_t) + 1; }

// Releases the Tensor buffer reference held for a zero-copy frame.
void ReleaseBuffer(void* /*data*/, void* hint) {
  delete static_cast<std::shared_ptr<uint8_t[]>*>(hint);
}

zmq::message_t ZeroCopyFrame(const Tensor& tensor) {
  if (tensor.num_bytes() == 0) return zmq::message_t();
  auto* ref = new std::shared_ptr<uint8_t[]>(tensor.buffer());
  return zmq::message_t(const_cast<void*>(tensor.data()), tensor.num_bytes(), ReleaseBuffer, ref);
}

// `frame`'s bytes copied to `words` (at least CopyWords(frame.size()) of them).
const uint8_t* CopiedInto(const zmq::message_t& frame, uint64_t* words) {
  if (frame.size() > 0) std::memcpy(words, frame.data(), frame.size());
  return reinterpret_cast<const uint8_t*>(words);
}

// The header at 8-byte aligned `bytes` if its FlatBuffers structure
// verifies, within limits that bound what a peer's buffer can make the
// verifier walk; else nullptr.
const wire::Header* HeaderAt(const uint8_t* bytes, size_t size) {
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 100000;
  flatbuffers::Verifier verifier(bytes, size, options);
  if (size < sizeof(flatbuffers::uoffset_t) || !wire::VerifyHeaderBuffer(verifier)) return nullptr;
  return wire::GetHeader(bytes);
}

// Checks tensor `index`'s descriptor against the `frame_bytes` that carry it
// and fills *shape with its dimensions. The verifier only promises 4-byte
// alignment for a vector's elements, so the dimensions are copied out
// byte-wise rather than read in place.
Status CheckDescriptor(const wire::TensorDesc* desc, size_t index, size_t frame_bytes,
                       Shape* shape) {
  // The labels are built only for an error: this runs for every tensor of
  // every message.
  auto where = [index] { return "tensor " + std::to_string(index); };
  if (desc == nullptr || desc->name() == nullptr || desc->name()->size() == 0) {
    return InvalidArgument(where() + " has no name");
  }
  auto named = [&] { return where() + " '" + desc->name()->str() + "'"; };
  const StatusOr<DType> dtype = FromWire(desc->dtype());
  if (!dtype.ok()) return InvalidArgument(named() + " has " + dtype.status().message());
  if (desc->shape() == nullptr) return InvalidArgument(named() + " has no shape");
  if (desc->role() > wire::TensorRole::MAX) {
    return InvalidArgument(named() + " has unknown role " +
                           std::to_string(static_cast<int>(desc->role())));
  }
  if (desc->shape()->size() > kMaxRank) {
    return InvalidArgument(named() + " has rank " + std::to_string(desc->shape()->size()) + " > " +
                           std::to_string(kMaxRank));
  }
  uint64_t elements = 1;
  const flatbuffers::Vector<int64_t>& dims = *desc->shape();
  shape->resize(dims.size());
  for (flatbuffers::uoffset_t i = 0; i < dims.size(); ++i) {
    int64_t d;
    std::memcpy(&d, dims.Data() + i * sizeof(int64_t), sizeof d);
    (*shape)[i] = d;
    if (d < 0 || d > kMaxDim) {
      return InvalidArgument(named() + " has bad dimension " + std::to_string(d));
    }
    // Checked before multiplying, so the product cannot wrap around.
    if (d != 0 && elements > static_cast<uint64_t>(kMaxDim) / static_cast<uint64_t>(d)) {
      return InvalidArgument(named() + " has too many elements");
    }
    elements *= static_cast<uint64_t>(d);
  }
  const uint64_t expected = elements * DTypeSize(*dtype);
  if (desc->byte_length() != expected) {
    return InvalidArgument(named() + " declares " + std::to_string(desc->byte_length()) +
                           " bytes but its shape needs " + std::to_string(expected));
  }
  if (frame_bytes != expected) {
    return InvalidArgument(named() + " frame holds " + std::to_string(frame_bytes) +
                           " bytes, descriptor says " + std::to_string(expected));
  }
  return Status::OK();
}

}  // namespace

Status MessageTooLarge(size_t max_message_bytes) {
  return ResourceExhausted("message exceeds max_message_bytes (" +
                           std::to_string(max_message_bytes) + "; counting " +
                           std::to_string(FrameCost(0)) + " bytes per frame besides its data)");
}

wire::DataType ToWire(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return wire::DataType::Float32;
    case DType::kInt64: return wire::DataType::Int64;
    case DType::kBFloat16: return wire::DataType::BFloat16;
  }
  LOG(FATAL) << "unknown dtype " << static_cast<int>(dtype);
}

StatusOr<DType> FromWire(wire::DataType dtype) {
  switch (dtype) {
    case wire::DataType::Float32: return DType::kFloat32;
    case wire::DataType::Int64: return DType::kInt64;
    case wire::DataType::BFloat16: return DType::kBFloat16;
  }
  return InvalidArgument("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

std::vector<zmq::message_t> EncodeMessage(const OutgoingMessage& message,
                                          const Envelope& envelope) {
  // Kept from message to message on this thread, with their buffers: the
  // header is copied into its frame below.
  thread_local flatbuffers::FlatBufferBuilder fbb(1024);
  thread_local std::vector<flatbuffers::Offset<wire::TensorDesc>> descs;
  fbb.Clear();
  descs.clear();
  for (const OutTensor& t : message.tensors) {
    descs.push_back(wire::CreateTensorDesc(fbb, fbb.CreateString(t.name), ToWire(t.tensor.dtype()),
                                           fbb.CreateVector(t.tensor.shape()), t.tensor.num_bytes(),
                                           t.version, t.role));
  }
  auto tensors = fbb.CreateVector(descs);
  auto status_message = message.status.ok() ? flatbuffers::Offset<flatbuffers::String>()
                                            : fbb.CreateString(message.status.message());
  auto names =
      message.names.empty()
          ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>()
          : fbb.CreateVectorOfStrings(message.names);
  const auto container = envelope.container.empty() ? flatbuffers::Offset<flatbuffers::String>()
                                                    : fbb.CreateString(envelope.container);
  HeaderExtras extras;
  if (message.extras) extras = message.extras(fbb);

  wire::HeaderBuilder header(fbb);
  header.add_type(message.type);
  header.add_request_id(envelope.request_id);
  header.add_cluster_id(envelope.cluster_id);
  header.add_sender_role(envelope.role);
  header.add_sender_index(envelope.index);
  header.add_step(message.step);
  header.add_status_code(static_cast<int>(message.status.code()));
  if (!message.status.ok()) header.add_status_message(status_message);
  header.add_tensors(tensors);
  if (!message.names.empty()) header.add_names(names);
  // Left out at its default, so a float32 pull is byte-identical to one
  // encoded before the field existed.
  if (message.pull_dtype != DType::kFloat32) header.add_pull_dtype(ToWire(message.pull_dtype));
  if (!extras.init.IsNull()) header.add_init(extras.init);
  if (!extras.push.IsNull()) header.add_push(extras.push);
  if (!extras.push_result.IsNull()) header.add_push_result(extras.push_result);
  if (!extras.shard_stats.IsNull()) header.add_shard_stats(extras.shard_stats);
  if (!extras.join.IsNull()) header.add_join(extras.join);
  if (!extras.report.IsNull()) header.add_report(extras.report);
  if (!extras.checkpoint.IsNull()) header.add_checkpoint(extras.checkpoint);
  if (!extras.replica.IsNull()) header.add_replica(extras.replica);
  if (!extras.chains.IsNull()) header.add_chains(extras.chains);
  if (!extras.streams.IsNull()) header.add_streams(extras.streams);
  if (!extras.file.IsNull()) header.add_file(extras.file);
  if (!envelope.container.empty()) header.add_container(container);
  fbb.Finish(header.Finish());

  std::vector<zmq::message_t> frames;
  frames.reserve(1 + message.tensors.size());
  frames.emplace_back(fbb.GetBufferPointer(), fbb.GetSize());
  for (const OutTensor& t : message.tensors) {
    frames.push_back(ZeroCopyFrame(t.tensor));
  }
  return frames;
}

const uint8_t* AlignedBytes(const zmq::message_t& frame, std::unique_ptr<uint64_t[]>* storage) {
  if (IsAligned(frame.data())) return static_cast<const uint8_t*>(frame.data());
  storage->reset(new uint64_t[CopyWords(frame.size())]);
  return CopiedInto(frame, storage->get());
}

const wire::Header* VerifiedHeader(const zmq::message_t& frame,
                                   std::unique_ptr<uint64_t[]>* storage) {
  return HeaderAt(AlignedBytes(frame, storage), frame.size());
}

Tensor TensorView::ToTensor() const {
  Tensor t = Tensor::Uninitialized(dtype, shape);
  if (num_bytes) std::memcpy(t.data(), data, num_bytes);
  return t;
}

Status ReceivedMessage::status() const {
  const int code = header_->status_code();
  if (code == 0) return Status::OK();
  const auto* message = header_->status_message();
  return Status(static_cast<Code>(code), message ? message->str() : "");
}

namespace {

// Verifies a header (its FlatBuffers structure, a known type) at 8-byte
// aligned `bytes` and returns it.
StatusOr<const wire::Header*> VerifyHeader(const uint8_t* bytes, size_t size) {
  const wire::Header* header = HeaderAt(bytes, size);
  if (header == nullptr) {
    return InvalidArgument("header of " + std::to_string(size) +
                           " bytes failed FlatBuffers verification");
  }
  if (header->type() == wire::MessageType::Invalid || header->type() > wire::MessageType::MAX) {
    return InvalidArgument("unknown message type " +
                           std::to_string(static_cast<int>(header->type())));
  }
  return header;
}

// The view of the tensor that `desc` describes (CheckDescriptor accepted it
// and read its `shape`), whose bytes are at `data`.
TensorView MakeView(const wire::TensorDesc& desc, Shape shape, const void* data, size_t num_bytes) {
  TensorView view;
  view.name = desc.name()->string_view();
  view.dtype = *FromWire(desc.dtype());
  view.shape = std::move(shape);
  view.version = desc.version();
  view.role = desc.role();
  view.data = data;
  view.num_bytes = num_bytes;
  return view;
}

size_t InPlaceOffset(size_t end_of_previous) {
  return (end_of_previous + kInPlaceAlign - 1) / kInPlaceAlign * kInPlaceAlign;
}

}  // namespace

size_t InPlacePayloadBytes(const std::vector<zmq::message_t>& frames, size_t first) {
  size_t end = 0;
  for (size_t i = first; i < frames.size(); ++i) end = InPlaceOffset(end) + frames[i].size();
  return end;
}

void CopyInPlacePayload(const std::vector<zmq::message_t>& frames, size_t first, uint8_t* out) {
  size_t end = 0;
  for (size_t i = first; i < frames.size(); ++i) {
    const size_t offset = InPlaceOffset(end);
    if (frames[i].size() > 0) std::memcpy(out + offset, frames[i].data(), frames[i].size());
    end = offset + frames[i].size();
  }
}

ReceivedMessage::ReceivedMessage() = default;
ReceivedMessage::ReceivedMessage(ReceivedMessage&&) noexcept = default;
ReceivedMessage& ReceivedMessage::operator=(ReceivedMessage&&) noexcept = default;
ReceivedMessage::~ReceivedMessage() = default;

StatusOr<ReceivedMessage> MessageDecoder::Decode(std::vector<zmq::message_t> frames,
                                                 size_t max_message_bytes) {
  if (frames.empty()) return InvalidArgument("empty message");
  size_t total = 0;
  size_t cost = 0;
  size_t copy_words = 0;
  for (const auto& f : frames) {
    total += f.size();
    cost += FrameCost(f.size());
    if (!IsAligned(f.data())) copy_words += CopyWords(f.size());
  }
  if (cost > max_message_bytes) return MessageTooLarge(max_message_bytes);
  ReceivedMessage message;
  // One block for every copy; each frame is copied only once what comes
  // before it has passed its checks.
  if (copy_words > 0) message.aligned_copies_.reset(new uint64_t[copy_words]);
  uint64_t* next_copy = message.aligned_copies_.get();
  auto aligned_bytes = [&next_copy](const zmq::message_t& frame) {
    if (IsAligned(frame.data())) return static_cast<const uint8_t*>(frame.data());
    const uint8_t* copy = CopiedInto(frame, next_copy);
    next_copy += CopyWords(frame.size());
    return copy;
  };
  PST_ASSIGN_OR_RETURN(const wire::Header* header,
                       VerifyHeader(aligned_bytes(frames[0]), frames[0].size()));
  const size_t declared = header->tensors() ? header->tensors()->size() : 0;
  if (declared != frames.size() - 1) {
    return InvalidArgument("header declares " + std::to_string(declared) + " tensors but " +
                           std::to_string(frames.size() - 1) + " tensor frames arrived");
  }
  message.tensors_.reserve(declared);
  for (size_t i = 0; i < declared; ++i) {
    const wire::TensorDesc* desc = header->tensors()->Get(i);
    Shape shape;
    PST_RETURN_IF_ERROR(CheckDescriptor(desc, i, frames[i + 1].size(), &shape));
    message.tensors_.push_back(
        MakeView(*desc, std::move(shape), aligned_bytes(frames[i + 1]), frames[i + 1].size()));
  }
  message.total_bytes_ = total;
  message.header_ = header;
  // Moving the vector moves no frame: the pointers taken above stay valid.
  message.frames_ = std::make_unique<MessageFrames>(MessageFrames{std::move(frames)});
  return message;
}

StatusOr<ReceivedMessage> MessageDecoder::DecodeInPlace(zmq::message_t header_frame,
                                                        const uint8_t* payload,
                                                        size_t payload_bytes,
                                                        std::shared_ptr<const void> payload_owner,
                                                        size_t max_message_bytes) {
  size_t cost = FrameCost(header_frame.size());
  if (cost > max_message_bytes) return MessageTooLarge(max_message_bytes);
  ReceivedMessage message;
  // Read where the message keeps it: ZeroMQ holds a frame of up to 33
  // bytes inside the zmq_msg_t, so its bytes move with the frame.
  message.frames_ = std::make_unique<MessageFrames>();
  message.frames_->frames.push_back(std::move(header_frame));
  const zmq::message_t& kept = message.frames_->frames.front();
  PST_ASSIGN_OR_RETURN(const wire::Header* header,
                       VerifyHeader(AlignedBytes(kept, &message.aligned_copies_), kept.size()));
  const size_t declared = header->tensors() ? header->tensors()->size() : 0;
  message.tensors_.reserve(declared);
  size_t end = 0;
  for (size_t i = 0; i < declared; ++i) {
    const wire::TensorDesc* desc = header->tensors()->Get(i);
    const size_t offset = InPlaceOffset(end);
    // The declared length only places the bytes; CheckDescriptor then
    // holds it to the shape, as it holds a frame's size.
    const uint64_t length = desc == nullptr ? 0 : desc->byte_length();
    if (offset > payload_bytes || length > payload_bytes - offset) {
      return InvalidArgument("tensor " + std::to_string(i) + " overruns the payload of " +
                             std::to_string(payload_bytes) + " bytes");
    }
    Shape shape;
    PST_RETURN_IF_ERROR(CheckDescriptor(desc, i, length, &shape));
    cost += FrameCost(length);
    if (cost > max_message_bytes) return MessageTooLarge(max_message_bytes);
    message.tensors_.push_back(MakeView(*desc, std::move(shape), payload + offset, length));
    end = offset + length;
  }
  if (end != payload_bytes) {
    return InvalidArgument("payload of " + std::to_string(payload_bytes) + " bytes, its " +
                           std::to_string(declared) + " tensors take " + std::to_string(end));
  }
  message.total_bytes_ = kept.size() + payload_bytes;
  message.header_ = header;
  message.payload_owner_ = std::move(payload_owner);
  return message;
}

}  // namespace pst
