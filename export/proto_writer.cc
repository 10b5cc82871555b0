#include "export/proto_writer.h"

#include <cstring>

namespace pst {
namespace {

// The wire types of protobuf's encoding.
constexpr int kVarint = 0;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

}  // namespace

void ProtoWriter::RawVarint(uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<char>(value));
}

void ProtoWriter::Tag(int field, int wire_type) {
  RawVarint((static_cast<uint64_t>(field) << 3) | wire_type);
}

ProtoWriter& ProtoWriter::Varint(int field, int64_t value) {
  Tag(field, kVarint);
  RawVarint(static_cast<uint64_t>(value));
  return *this;
}

ProtoWriter& ProtoWriter::Float(int field, float value) {
  Tag(field, kFixed32);
  char little_endian[4];  // x86-64 and every target pstrain builds for
  std::memcpy(little_endian, &value, 4);
  bytes_.append(little_endian, 4);
  return *this;
}

ProtoWriter& ProtoWriter::Bytes(int field, std::string_view bytes) {
  Tag(field, kLengthDelimited);
  RawVarint(bytes.size());
  bytes_.append(bytes);
  return *this;
}

ProtoWriter& ProtoWriter::Message(int field, const ProtoWriter& message) {
  return Bytes(field, message.serialized());
}

ProtoWriter& ProtoWriter::PackedInt64s(int field, const std::vector<int64_t>& values) {
  ProtoWriter packed;
  for (int64_t v : values) packed.RawVarint(static_cast<uint64_t>(v));
  return Bytes(field, packed.serialized());
}

}  // namespace pst
