// ProtoWriter: a protocol buffers message in the wire format
// (protobuf.dev/programming-guides/encoding), written field by field, for
// the field types an ONNX model needs: varints (int32, int64, enums), 32-bit
// floats, length-delimited fields (strings, bytes, nested messages) and
// packed repeated int64. Fields are written in the order they are called.
#ifndef PST_EXPORT_PROTO_WRITER_H_
#define PST_EXPORT_PROTO_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pst {

class ProtoWriter {
 public:
  // int32, int64, uint64 and enum fields; a negative value takes 10 bytes,
  // as protobuf writes it.
  ProtoWriter& Varint(int field, int64_t value);
  ProtoWriter& Float(int field, float value);
  // string and bytes fields.
  ProtoWriter& Bytes(int field, std::string_view bytes);
  ProtoWriter& Message(int field, const ProtoWriter& message);
  ProtoWriter& PackedInt64s(int field, const std::vector<int64_t>& values);

  // The message so far, in the wire format.
  const std::string& serialized() const { return bytes_; }

 private:
  void Tag(int field, int wire_type);
  void RawVarint(uint64_t value);

  std::string bytes_;
};

}  // namespace pst

#endif  // PST_EXPORT_PROTO_WRITER_H_
