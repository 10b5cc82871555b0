#include "scheduler/token_queue.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

// A request context with a dummy return address.
struct FakeRequest {
  zmq::message_t routing{std::string("addr")};
  RequestContext context{&routing, 1};
};

TEST(TokenQueueTest, NothingBeforeOpen) {
  TokenQueue queue(2);
  FakeRequest r;
  EXPECT_FALSE(queue.TakeOrPark(0, r.context).has_value());
  EXPECT_TRUE(r.context.deferred());
  auto grants = queue.Advance(0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 0);
}

TEST(TokenQueueTest, OneTokenPerWorkerPerStep) {
  TokenQueue queue(2);
  queue.Advance(0);
  FakeRequest a, b, again;
  EXPECT_EQ(queue.TakeOrPark(0, a.context), 0);
  EXPECT_EQ(queue.TakeOrPark(1, b.context), 0);
  EXPECT_FALSE(queue.TakeOrPark(0, again.context).has_value());  // parked
  auto grants = queue.Advance(1);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 1);
  FakeRequest next;
  EXPECT_FALSE(queue.TakeOrPark(0, next.context).has_value());  // took 1 already
}

TEST(TokenQueueTest, LateWorkerGetsTheNewestStepAtOnce) {
  TokenQueue queue(3);
  queue.Advance(0);
  FakeRequest slow;
  EXPECT_EQ(queue.TakeOrPark(2, slow.context), 0);
  queue.Advance(1);
  queue.Advance(2);
  queue.Advance(3);
  FakeRequest late;
  EXPECT_EQ(queue.TakeOrPark(2, late.context), 3);
}

TEST(TokenQueueTest, ResetGoesBackAndHandsOutTheStepAgain) {
  TokenQueue queue(2);
  queue.Advance(7);
  FakeRequest a, again;
  EXPECT_EQ(queue.TakeOrPark(0, a.context), 7);
  EXPECT_FALSE(queue.TakeOrPark(0, again.context).has_value());  // parked
  auto grants = queue.Reset(5);  // a restore to step 5
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 5);
  FakeRequest other;
  EXPECT_EQ(queue.TakeOrPark(1, other.context), 5);
}

TEST(TokenQueueTest, CloseReleasesParkedRequests) {
  TokenQueue queue(2);
  queue.Advance(0);
  FakeRequest a, b;
  queue.TakeOrPark(0, a.context);
  queue.TakeOrPark(0, b.context);  // parked
  auto released = queue.Close();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].step, -1);
  FakeRequest after;
  EXPECT_FALSE(queue.TakeOrPark(1, after.context).has_value());
  EXPECT_FALSE(after.context.deferred());  // closed: answered at once, not parked
}

}  // namespace
}  // namespace pst
