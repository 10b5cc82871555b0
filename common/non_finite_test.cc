#include "common/non_finite.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "common/bfloat16.h"

namespace pst {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(FirstNonFiniteTest, NoneGivesTheLength) {
  // The largest finite values and a denormal are finite.
  std::vector<float> x(200, std::numeric_limits<float>::max());
  x[3] = -std::numeric_limits<float>::max();
  x[4] = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(FirstNonFinite(x.data(), 200), 200);
  EXPECT_EQ(FirstNonFinite(x.data(), 0), 0);
}

// In the first block, in a later block, in the tail past the last whole
// block, and the first of two in one block.
TEST(FirstNonFiniteTest, FindsTheFirstWherever) {
  for (const int64_t at : {0, 5, 63, 64, 100, 191, 192, 199}) {
    for (const float bad : {kNaN, kInf, -kInf}) {
      std::vector<float> x(200, 1.0f);
      x[at] = bad;
      if (at + 1 < 200) x[at + 1] = kNaN;
      EXPECT_EQ(FirstNonFinite(x.data(), 200), at) << at << " " << bad;
    }
  }
}

TEST(FirstNonFiniteTest, BFloat16) {
  std::vector<uint16_t> x(150, FloatToBFloat16(2.5f));
  EXPECT_EQ(FirstNonFinite(x.data(), 150), 150);
  x[140] = FloatToBFloat16(-kInf);
  x[149] = FloatToBFloat16(kNaN);
  EXPECT_EQ(FirstNonFinite(x.data(), 150), 140);
  x[70] = FloatToBFloat16(kNaN);
  EXPECT_EQ(FirstNonFinite(x.data(), 150), 70);
}

}  // namespace
}  // namespace pst
