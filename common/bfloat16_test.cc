#include "common/bfloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace pst {
namespace {

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t Narrow(uint32_t float_bits) { return FloatToBFloat16(FromBits(float_bits)); }

TEST(BFloat16Test, RepresentableValuesAreExact) {
  for (float x : {0.0f, 1.0f, -2.0f, 0.5f, 1.5f, 3.0f, -0.375f, 65536.0f}) {
    EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(x)), x);
  }
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(-0.0f), 0x8000);
}

TEST(BFloat16Test, EveryBFloat16RoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t x = static_cast<uint16_t>(b);
    const float wide = BFloat16ToFloat(x);
    if (std::isnan(wide)) {
      EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(wide)))) << b;
    } else {
      EXPECT_EQ(FloatToBFloat16(wide), x) << b;
    }
  }
}

TEST(BFloat16Test, RoundsToNearest) {
  EXPECT_EQ(Narrow(0x3f808001), 0x3f81);  // just above half-way: up
  EXPECT_EQ(Narrow(0x3f807fff), 0x3f80);  // just below half-way: down
  EXPECT_EQ(Narrow(0xbf808001), 0xbf81);  // the same for negatives (away from 0)
}

TEST(BFloat16Test, TiesGoToEven) {
  EXPECT_EQ(Narrow(0x3f808000), 0x3f80);  // 0x3f80 is even: stays
  EXPECT_EQ(Narrow(0x3f818000), 0x3f82);  // 0x3f81 is odd: up to even
  EXPECT_EQ(Narrow(0xbf818000), 0xbf82);
  EXPECT_EQ(Narrow(0x3f7f8000), 0x3f80);  // the carry crosses into the exponent
}

TEST(BFloat16Test, InfinitiesAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToBFloat16(inf), 0x7f80);
  EXPECT_EQ(FloatToBFloat16(-inf), 0xff80);
  EXPECT_EQ(BFloat16ToFloat(0x7f80), inf);
  // Above the largest bfloat16 (0x7f7f) by half an ulp or more: infinity.
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(Narrow(0x7f7f7fff), 0x7f7f);
  EXPECT_TRUE(IsNonFiniteBFloat16(0x7f80));
  EXPECT_TRUE(IsNonFiniteBFloat16(0xff80));
  EXPECT_FALSE(IsNonFiniteBFloat16(0x7f7f));
}

TEST(BFloat16Test, NaNStaysQuietNaN) {
  // A signalling NaN whose payload sits only in the dropped bits, and one
  // whose rounding would carry into the sign: both stay NaN, made quiet.
  for (uint32_t bits : {0x7f800001u, 0x7fbfffffu, 0x7fffffffu, 0xff800001u, 0x7fc00000u}) {
    const uint16_t b = Narrow(bits);
    EXPECT_TRUE(std::isnan(BFloat16ToFloat(b))) << std::hex << bits;
    EXPECT_EQ(b & 0x0040, 0x0040) << std::hex << bits;
    EXPECT_EQ(b & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
    EXPECT_TRUE(IsNonFiniteBFloat16(b));
  }
}

TEST(BFloat16Test, Denormals) {
  EXPECT_EQ(Narrow(0x00010000), 0x0001);  // smallest bfloat16 denormal
  EXPECT_EQ(BFloat16ToFloat(0x0001), FromBits(0x00010000));
  EXPECT_EQ(Narrow(0x00008000), 0x0000);  // half of it: tie to even zero
  EXPECT_EQ(Narrow(0x00018000), 0x0002);  // 1.5 of it: tie to even 2
  EXPECT_EQ(Narrow(0x80008001), 0x8001);  // negative, above half-way
  EXPECT_EQ(Narrow(0x007fffff), 0x0080);  // largest denormal rounds to the smallest normal
}

TEST(BFloat16Test, ArrayConversionMatchesScalar) {
  // Long enough for the vectorised blocks plus a remainder.
  std::vector<float> in(64 * 3 + 17);
  for (size_t i = 0; i < in.size(); ++i) in[i] = FromBits(0x3f800000u + 0x1357u * i);
  in[5] = std::numeric_limits<float>::quiet_NaN();
  in[70] = -std::numeric_limits<float>::infinity();
  std::vector<uint16_t> narrow(in.size());
  FloatToBFloat16(in.data(), narrow.data(), in.size());
  std::vector<float> wide(in.size());
  BFloat16ToFloat(narrow.data(), wide.data(), narrow.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(narrow[i], FloatToBFloat16(in[i])) << i;
    const float expected = BFloat16ToFloat(narrow[i]);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(wide[i])) << i;
    } else {
      EXPECT_EQ(wide[i], expected) << i;
    }
  }
}

// Narrow-and-check: the same bytes as FloatToBFloat16 when all is finite,
// else the first NaN or infinity, wherever it lies (in a block or in the
// remainder); a finite float32 that narrows to infinity counts.
TEST(BFloat16Test, CheckedNarrowingFindsTheFirstNonFinite) {
  std::vector<float> in(1024 * 2 + 17);  // blocks checked whole, and a remainder
  for (size_t i = 0; i < in.size(); ++i) in[i] = FromBits(0x3f800000u + 0x357u * i);
  std::vector<uint16_t> checked(in.size()), plain(in.size());
  const int64_t n = static_cast<int64_t>(in.size());
  ASSERT_EQ(FloatToBFloat16Checked(in.data(), checked.data(), n), n);
  FloatToBFloat16(in.data(), plain.data(), n);
  EXPECT_EQ(checked, plain);
  const float kBad[] = {std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max()};
  for (const int64_t at : {int64_t{0}, int64_t{63}, int64_t{1023}, int64_t{1500}, n - 1}) {
    for (const float bad : kBad) {
      std::vector<float> with = in;
      with[at] = bad;
      if (at + 1 < n) with[n - 1] = std::numeric_limits<float>::quiet_NaN();  // a later one
      EXPECT_EQ(FloatToBFloat16Checked(with.data(), checked.data(), n), at) << at << " " << bad;
    }
  }
}

}  // namespace
}  // namespace pst
