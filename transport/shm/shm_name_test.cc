#include "transport/shm/shm_name.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(ShmNameTest, CarriesTheClusterIdInHexThePidAndThePurpose) {
  StatusOr<std::string> name = ShmSegmentName(0xff, 1234, "push.0");
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, "/pst-00000000000000ff-1234-push.0");
  EXPECT_EQ(ShmClusterPrefix(0xff), "pst-00000000000000ff-");
}

TEST(ShmNameTest, RefusesAPurposeThatIsEmptyTooLongOrHoldsOtherCharacters) {
  EXPECT_EQ(ShmSegmentName(1, 2, "").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmSegmentName(1, 2, std::string(129, 'a')).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmSegmentName(1, 2, "a/b").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmSegmentName(1, 2, "a b").status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(ShmSegmentName(1, 2, std::string(128, 'a')).ok());
}

TEST(ShmNameTest, ParsesWhatItNamesBack) {
  const std::string name = *ShmSegmentName(0x0123456789abcdefULL, 4321, "conn-7");
  const std::optional<ShmNameParts> parts = ParseShmSegmentName(name.substr(1));
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->cluster_id, 0x0123456789abcdefULL);
  EXPECT_EQ(parts->creator, 4321);
}

TEST(ShmNameTest, ParsesNoOtherName) {
  for (const char* entry :
       {"", ".", "..", "pst-", "pst-00000000000000ff-1234-", "pst-00000000000000ff--x",
        "pst-00000000000000FF-1234-x", "pst-00000000000000f-1234-x", "pst-00000000000000ff-12a4-x",
        "pst-00000000000000ff-0-x", "pst-00000000000000ff-99999999999-x",
        "xst-00000000000000ff-1234-x", "sem.pst-00000000000000ff-1234-x"}) {
    EXPECT_FALSE(ParseShmSegmentName(entry).has_value()) << entry;
  }
}

}  // namespace
}  // namespace pst
