#include "common/status.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status UseHalf(int x, int* out) {
  PST_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::OK();
}

TEST(StatusTest, OkAndErrorsFormat) {
  EXPECT_TRUE(Status::OK().ok());
  EXPECT_EQ(Status::OK().ToString(), "OK");
  Status s = DeadlineExceeded("no reply from ps:1");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded);
  EXPECT_EQ(s.ToString(), "DeadlineExceeded: no reply from ps:1");
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = -1;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status s = UseHalf(3, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd: 3");
  EXPECT_EQ(out, 4);
}

}  // namespace
}  // namespace pst
