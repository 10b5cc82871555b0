#include "transport/message.h"

#include <gtest/gtest.h>

#include <cstring>

#include "transport/frames.h"

namespace pst {
namespace {

constexpr size_t kLimit = 1 << 20;

std::vector<zmq::message_t> SampleFrames() {
  OutgoingMessage m;
  m.type = wire::MessageType::PushRequest;
  m.step = 42;
  Tensor t(DType::kFloat32, {2, 3});
  for (int i = 0; i < 6; ++i) t.f32()[i] = i * 0.5f;
  m.tensors.push_back({"dense0/weights", 7, t});
  Tensor c(DType::kInt64, {});
  c.i64()[0] = 9;
  m.tensors.push_back({"global_step", 1, c});
  return EncodeMessage(m, {11, 99, wire::Role::Worker, 2});
}

TEST(MessageTest, RoundTrip) {
  auto decoded = DecodeMessage(SampleFrames(), kLimit);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ReceivedMessage& m = *decoded;
  EXPECT_EQ(m.type(), wire::MessageType::PushRequest);
  EXPECT_EQ(m.request_id(), 11u);
  EXPECT_EQ(m.header().cluster_id(), 99u);
  EXPECT_EQ(m.header().sender_index(), 2);
  EXPECT_EQ(m.step(), 42);
  EXPECT_TRUE(m.status().ok());
  ASSERT_EQ(m.tensors().size(), 2u);
  EXPECT_EQ(m.tensors()[0].name, "dense0/weights");
  EXPECT_EQ(m.tensors()[0].shape, (Shape{2, 3}));
  EXPECT_EQ(m.tensors()[0].version, 7);
  EXPECT_FLOAT_EQ(m.tensors()[0].f32()[5], 2.5f);
  EXPECT_EQ(m.tensors()[1].i64()[0], 9);
}

TEST(MessageTest, ErrorStatusTravels) {
  OutgoingMessage m;
  m.type = wire::MessageType::PullReply;
  m.status = NotFound("no variable 'x'");
  auto decoded = DecodeMessage(EncodeMessage(m, {}), kLimit);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->status().code(), Code::kNotFound);
  EXPECT_EQ(decoded->status().message(), "no variable 'x'");
}

TEST(MessageTest, TensorFramesAreZeroCopy) {
  OutgoingMessage m;
  m.type = wire::MessageType::PullReply;
  Tensor t(DType::kFloat32, {1024});
  m.tensors.push_back({"v", 0, t});
  auto frames = EncodeMessage(m, {});
  EXPECT_EQ(frames[1].data(), t.data());
}

TEST(MessageTest, RejectsGarbageHeader) {
  std::vector<zmq::message_t> frames;
  frames.emplace_back("this is not a flatbuffer at all", 31);
  auto decoded = DecodeMessage(std::move(frames), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("verification"), std::string::npos);
}

// Every truncation is rejected, except one that only drops the alignment
// padding at the end of the buffer (its layout depends on the compiler's
// argument evaluation order): that one must decode to the same message.
TEST(MessageTest, RejectsTruncatedHeader) {
  const size_t size = SampleFrames()[0].size();
  size_t accepted = 0;
  for (size_t cut = 0; cut < size; ++cut) {
    auto copy = SampleFrames();
    copy[0] = zmq::message_t(copy[0].data(), cut);
    auto decoded = DecodeMessage(std::move(copy), kLimit);
    if (!decoded.ok()) continue;
    ++accepted;
    EXPECT_GE(cut, size - 7) << "cut at " << cut << " of " << size;
    EXPECT_EQ(decoded->step(), 42);
    ASSERT_EQ(decoded->tensors().size(), 2u);
    EXPECT_EQ(decoded->tensors()[0].name, "dense0/weights");
    EXPECT_EQ(decoded->tensors()[1].name, "global_step");
  }
  EXPECT_LE(accepted, 7u);
}

TEST(MessageTest, VerifiedHeaderReadsAnAlignedOrUnalignedFrame) {
  const std::vector<zmq::message_t> frames = SampleFrames();
  std::unique_ptr<uint64_t[]> storage;
  const wire::Header* header = VerifiedHeader(frames[0], &storage);
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->request_id(), 11u);
  EXPECT_EQ(storage, nullptr);  // read in place

  // The same bytes one past an 8-byte boundary are read from a copy.
  std::vector<uint64_t> words(frames[0].size() / 8 + 2);
  auto* unaligned = reinterpret_cast<uint8_t*>(words.data()) + 1;
  std::memcpy(unaligned, frames[0].data(), frames[0].size());
  const zmq::message_t shifted(
      unaligned, frames[0].size(), [](void*, void*) {}, nullptr);
  header = VerifiedHeader(shifted, &storage);
  ASSERT_NE(header, nullptr);
  EXPECT_NE(storage, nullptr);
  EXPECT_EQ(header->cluster_id(), 99u);
}

TEST(MessageTest, VerifiedHeaderRefusesGarbageButNotAnUnknownType) {
  std::unique_ptr<uint64_t[]> storage;
  EXPECT_EQ(VerifiedHeader(zmq::message_t("not a flatbuffer", 16), &storage), nullptr);
  EXPECT_EQ(VerifiedHeader(zmq::message_t(), &storage), nullptr);

  flatbuffers::FlatBufferBuilder fbb;
  wire::HeaderBuilder builder(fbb);
  builder.add_request_id(5);
  builder.add_type(static_cast<wire::MessageType>(200));
  fbb.Finish(builder.Finish());
  const zmq::message_t frame(fbb.GetBufferPointer(), fbb.GetSize());
  const wire::Header* header = VerifiedHeader(frame, &storage);
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->request_id(), 5u);
}

// ZeroMQ keeps a frame of up to 33 bytes inside its zmq_msg_t: the decoded
// message must read such a header where it keeps the frame, not where the
// frame was handed over (gone once the call returns).
TEST(MessageTest, InPlaceDecodeKeepsATinyHeadersBytes) {
  flatbuffers::FlatBufferBuilder fbb;
  wire::HeaderBuilder header(fbb);
  header.add_request_id(0x1122334455667788);
  header.add_type(wire::MessageType::PullRequest);
  fbb.Finish(header.Finish());
  ASSERT_LE(fbb.GetSize(), 33u);
  auto decode = [&] {
    return DecodeMessageInPlace(zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize()), nullptr, 0,
                                nullptr, kLimit);
  };
  StatusOr<ReceivedMessage> decoded = decode();
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  // Overwrites the stack where the handed-over frame was.
  ASSERT_TRUE(DecodeMessage(SampleFrames(), kLimit).ok());
  EXPECT_EQ(decoded->type(), wire::MessageType::PullRequest);
  EXPECT_EQ(decoded->request_id(), 0x1122334455667788u);
}

TEST(MessageTest, RejectsEmptyMessage) { EXPECT_FALSE(DecodeMessage({}, kLimit).ok()); }

TEST(MessageTest, RejectsOversizedMessage) {
  auto decoded = DecodeMessage(SampleFrames(), 64);
  EXPECT_EQ(decoded.status().code(), Code::kResourceExhausted);
  EXPECT_NE(decoded.status().message().find("max_message_bytes"), std::string::npos);
}

TEST(MessageTest, CountsEveryFrameAgainstTheLimit) {
  // No data at all, but 2000 frames of ZeroMQ's bookkeeping (128 KB).
  auto frames = SampleFrames();
  for (int i = 0; i < 2000; ++i) frames.emplace_back();
  auto decoded = DecodeMessage(std::move(frames), 65536);
  EXPECT_EQ(decoded.status().code(), Code::kResourceExhausted);
}

TEST(MessageTest, RejectsMissingTensorFrame) {
  auto frames = SampleFrames();
  frames.pop_back();
  auto decoded = DecodeMessage(std::move(frames), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("declares 2 tensors"), std::string::npos);
}

TEST(MessageTest, RejectsFrameOfWrongLength) {
  auto frames = SampleFrames();
  frames[1] = zmq::message_t(20);  // descriptor says 24 bytes
  auto decoded = DecodeMessage(std::move(frames), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("dense0/weights"), std::string::npos);
}

// A push whose one descriptor is written by hand (the encoder would never
// produce it): `shape`, `byte_length`, and a tensor frame of `frame_bytes`.
std::vector<zmq::message_t> HandBuiltPush(std::vector<int64_t> shape, uint64_t byte_length,
                                          size_t frame_bytes,
                                          wire::DataType dtype = wire::DataType::Float32) {
  flatbuffers::FlatBufferBuilder fbb;
  auto desc = wire::CreateTensorDesc(fbb, fbb.CreateString("w"), dtype, fbb.CreateVector(shape),
                                     byte_length, 0);
  auto tensors = fbb.CreateVector(std::vector{desc});
  wire::HeaderBuilder h(fbb);
  h.add_type(wire::MessageType::PushRequest);
  h.add_tensors(tensors);
  fbb.Finish(h.Finish());
  std::vector<zmq::message_t> frames;
  frames.emplace_back(fbb.GetBufferPointer(), fbb.GetSize());
  frames.emplace_back(frame_bytes);
  return frames;
}

TEST(MessageTest, RejectsDescriptorInconsistentWithShape) {
  auto decoded = DecodeMessage(HandBuiltPush({4, 4}, 8, 8), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("shape needs 64"), std::string::npos);
}

TEST(MessageTest, RejectsNegativeDimension) {
  EXPECT_FALSE(DecodeMessage(HandBuiltPush({-1, 4}, 0, 0), kLimit).ok());
}

TEST(MessageTest, RejectsOverflowingShape) {
  auto decoded = DecodeMessage(HandBuiltPush({int64_t{1} << 40, int64_t{1} << 40}, 0, 0), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
}

TEST(MessageTest, BFloat16TensorRoundTrip) {
  OutgoingMessage m;
  m.type = wire::MessageType::PushRequest;
  Tensor narrow(DType::kBFloat16, {3, 2});
  for (int i = 0; i < 6; ++i) narrow.bf16()[i] = static_cast<uint16_t>(0x3f80 + i);
  m.tensors.push_back({"w", 7, narrow});
  auto decoded = DecodeMessage(EncodeMessage(m, {}), kLimit);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const TensorView& t = decoded->tensors()[0];
  EXPECT_EQ(t.dtype, DType::kBFloat16);
  EXPECT_EQ(t.num_bytes, 12u);
  EXPECT_EQ(t.bf16()[5], 0x3f85);
  EXPECT_EQ(decoded->header().tensors()->Get(0)->dtype(), wire::DataType::BFloat16);
}

TEST(MessageTest, Float32PullLeavesPullDtypeOffTheWire) {
  OutgoingMessage pull;
  pull.type = wire::MessageType::PullRequest;
  pull.names = {"w"};
  // Absent, not written as its default: the header is what it was before
  // the field existed.
  const auto frames = EncodeMessage(pull, {});
  const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(frames[0].data());
  EXPECT_EQ(table->GetOptionalFieldOffset(wire::Header::VT_PULL_DTYPE), 0);
  pull.pull_dtype = DType::kBFloat16;
  auto narrow = DecodeMessage(EncodeMessage(pull, {}), kLimit);
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow->header().pull_dtype(), wire::DataType::BFloat16);
}

TEST(MessageTest, RejectsBFloat16FrameOfFloat32Length) {
  // The descriptor says 4 bfloat16 values (8 bytes); the frame holds 4 floats.
  auto decoded = DecodeMessage(HandBuiltPush({4}, 8, 16, wire::DataType::BFloat16), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("frame holds 16 bytes, descriptor says 8"),
            std::string::npos)
      << decoded.status().message();
}

TEST(MessageTest, RejectsBFloat16DescriptorWithFloat32Length) {
  auto decoded = DecodeMessage(HandBuiltPush({4}, 16, 16, wire::DataType::BFloat16), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("shape needs 8"), std::string::npos)
      << decoded.status().message();
}

TEST(MessageTest, RejectsUnknownDtype) {
  auto decoded = DecodeMessage(HandBuiltPush({4}, 8, 8, static_cast<wire::DataType>(3)), kLimit);
  EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("unknown dtype 3"), std::string::npos)
      << decoded.status().message();
}

}  // namespace
}  // namespace pst
