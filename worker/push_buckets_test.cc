#include "worker/push_buckets.h"

#include <gtest/gtest.h>

#include <vector>

namespace pst {
namespace {

using Part = std::vector<int>;

// mlp_relu's layers as backprop reports them: dense2 (5 KB), dense1
// (132 KB), dense0 (804 KB); variables 0-1 are dense0, 2-3 dense1, 4-5 dense2.
const std::vector<int64_t> kBytes = {802816, 1024, 131072, 512, 5120, 40};

TEST(PushBucketsTest, SmallLayersRideWithTheNextUntilTheBucketIsFull) {
  PushBuckets buckets(kBytes, 100000);
  buckets.StartStep();
  EXPECT_EQ(buckets.Ready(4, 6), Part{});
  EXPECT_EQ(buckets.Ready(2, 4), Part({4, 5, 2, 3}));
  EXPECT_FALSE(buckets.complete());
  EXPECT_EQ(buckets.Ready(0, 2), Part({0, 1}));
  EXPECT_TRUE(buckets.complete());
}

TEST(PushBucketsTest, TheLastReportClosesThePartWhateverItsSize) {
  PushBuckets buckets(kBytes, int64_t{1} << 30);
  buckets.StartStep();
  EXPECT_EQ(buckets.Ready(4, 6), Part{});
  EXPECT_EQ(buckets.Ready(2, 4), Part{});
  EXPECT_EQ(buckets.Ready(0, 2), Part({4, 5, 2, 3, 0, 1}));
  EXPECT_TRUE(buckets.complete());
}

TEST(PushBucketsTest, ZeroBytesMakesEveryReportAPart) {
  PushBuckets buckets(kBytes, 0);
  buckets.StartStep();
  EXPECT_EQ(buckets.Ready(4, 6), Part({4, 5}));
  EXPECT_EQ(buckets.Ready(2, 4), Part({2, 3}));
  EXPECT_EQ(buckets.Ready(0, 2), Part({0, 1}));
}

TEST(PushBucketsTest, ANewStepStartsEmpty) {
  PushBuckets buckets(kBytes, int64_t{1} << 30);
  buckets.StartStep();
  EXPECT_EQ(buckets.Ready(4, 6), Part{});
  buckets.StartStep();  // the last step was abandoned midway
  EXPECT_FALSE(buckets.complete());
  EXPECT_EQ(buckets.Ready(0, 6), Part({0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(buckets.complete());
}

TEST(PushBucketsDeathTest, AVariableReportedTwiceIsABug) {
  PushBuckets buckets(kBytes, 0);
  buckets.StartStep();
  buckets.Ready(0, 6);
  EXPECT_DEATH(buckets.Ready(4, 6), "reported twice");
}

}  // namespace
}  // namespace pst
