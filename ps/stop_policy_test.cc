#include "ps/stop_policy.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace pst {
namespace {

using std::chrono::milliseconds;

class StopPolicyTest : public ::testing::Test {
 protected:
  StopPolicy policy_{StopPolicyOptions{milliseconds(25000), milliseconds(3000)}};
  const MonotonicClock::TimePoint signalled_ = MonotonicClock::TimePoint() + std::chrono::hours(1);
};

TEST_F(StopPolicyTest, StopsAtOnceWhenTheChiefNeverSpoke) {
  const StopPolicy::Decision d = policy_.Decide(signalled_, signalled_, std::nullopt);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "the chief never spoke to this ps");
}

TEST_F(StopPolicyTest, ServesWhileTheChiefIsInTouch) {
  const StopPolicy::Decision d =
      policy_.Decide(signalled_ + milliseconds(10000), signalled_, signalled_ + milliseconds(9000));
  EXPECT_FALSE(d.stop) << d.reason;
}

TEST_F(StopPolicyTest, StopsOnceTheChiefIsSilent) {
  // Heard from just before the signal, then nothing for 3 s.
  EXPECT_FALSE(
      policy_.Decide(signalled_ + milliseconds(2998), signalled_, signalled_ - milliseconds(1))
          .stop);
  const StopPolicy::Decision d =
      policy_.Decide(signalled_ + milliseconds(3000), signalled_, signalled_);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "the chief has been silent for 3000 ms");
}

TEST_F(StopPolicyTest, StopsAfterTheGraceTimeEvenWithTheChiefInTouch) {
  const StopPolicy::Decision d = policy_.Decide(signalled_ + milliseconds(25000), signalled_,
                                                signalled_ + milliseconds(24900));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "the chief did not stop this ps within --stop_grace_ms=25000");
}

}  // namespace
}  // namespace pst
