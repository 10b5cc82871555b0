#include "common/split.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(SplitTest, SplitsAtEveryCommaKeepingEmptyEntries) {
  EXPECT_EQ(SplitCommas("gpu:0,gpu:1"), (std::vector<std::string>{"gpu:0", "gpu:1"}));
  EXPECT_EQ(SplitCommas("a,,b,"), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(SplitCommas("cpu"), (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(SplitCommas(""), (std::vector<std::string>{""}));
}

}  // namespace
}  // namespace pst
