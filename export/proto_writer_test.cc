#include "export/proto_writer.h"

#include <gtest/gtest.h>

#include <string>

namespace pst {
namespace {

std::string Hex(const std::string& bytes) {
  std::string out;
  char two[3];
  for (unsigned char b : bytes) {
    std::snprintf(two, sizeof two, "%02x", b);
    out += two;
  }
  return out;
}

// The examples of protobuf.dev/programming-guides/encoding.
TEST(ProtoWriterTest, EncodesAsTheProtobufDocumentationDoes) {
  EXPECT_EQ(Hex(ProtoWriter().Varint(1, 150).serialized()), "089601");
  EXPECT_EQ(Hex(ProtoWriter().Bytes(2, "testing").serialized()), "120774657374696e67");
  ProtoWriter inner;
  inner.Varint(1, 150);
  EXPECT_EQ(Hex(ProtoWriter().Message(3, inner).serialized()), "1a03089601");
  EXPECT_EQ(Hex(ProtoWriter().PackedInt64s(4, {3, 270, 86942}).serialized()), "2206038e029ea705");
}

TEST(ProtoWriterTest, NegativeVarintsTakeTenBytesAndFloatsAreLittleEndian) {
  EXPECT_EQ(Hex(ProtoWriter().Varint(1, -1).serialized()), "08ffffffffffffffffff01");
  EXPECT_EQ(Hex(ProtoWriter().Float(2, 1.0f).serialized()), "150000803f");
}

TEST(ProtoWriterTest, FieldsFollowInCallOrderAndLongBytesGetAMultiByteLength) {
  ProtoWriter w;
  w.Varint(1, 1).Bytes(2, std::string(200, 'x')).Varint(16, 0);
  const std::string bytes = w.serialized();
  EXPECT_EQ(Hex(bytes.substr(0, 5)), "080112c801");  // length 200: c8 01
  EXPECT_EQ(Hex(bytes.substr(205)),
            "8001"
            "00");  // field 16: a two-byte tag
}

}  // namespace
}  // namespace pst
