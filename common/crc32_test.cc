#include "common/crc32.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(Crc32Test, TheStandardCheckValue) { EXPECT_EQ(Crc32("123456789", 9), 0xCBF43926u); }

TEST(Crc32Test, NothingHasCrcZero) { EXPECT_EQ(Crc32(std::string()), 0u); }

}  // namespace
}  // namespace pst
