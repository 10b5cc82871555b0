#include "chief/sync/token_queue.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

// A request with a return address of its own.
struct FakeRequest {
  static inline uint64_t next_id = 1;
  RequestContext context{"addr", next_id++};
};

TEST(TokenQueueTest, NothingBeforeOpen) {
  TokenQueue queue(2);
  FakeRequest r;
  EXPECT_FALSE(queue.TakeOrPark(0, -1, r.context).has_value());
  EXPECT_TRUE(r.context.deferred());
  auto grants = queue.Advance(0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 0);
}

TEST(TokenQueueTest, OneTokenPerWorkerPerStep) {
  TokenQueue queue(2);
  queue.Advance(0);
  FakeRequest a, b, again;
  EXPECT_EQ(queue.TakeOrPark(0, -1, a.context), 0);
  EXPECT_EQ(queue.TakeOrPark(1, -1, b.context), 0);
  EXPECT_FALSE(queue.TakeOrPark(0, 0, again.context).has_value());  // parked
  auto grants = queue.Advance(1);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 1);
  FakeRequest next;
  // It received step 1 already.
  EXPECT_FALSE(queue.TakeOrPark(0, 1, next.context).has_value());
}

TEST(TokenQueueTest, ReSentRequestGetsTheSameGrant) {
  TokenQueue queue(2);
  queue.Advance(4);
  FakeRequest first, resent, next;
  EXPECT_EQ(queue.TakeOrPark(0, 3, first.context), 4);
  // The worker did not receive the first grant: it still last received 3.
  EXPECT_EQ(queue.TakeOrPark(0, 3, resent.context), 4);
  EXPECT_FALSE(resent.context.deferred());
  // Now it holds step 4: it waits for step 5.
  EXPECT_FALSE(queue.TakeOrPark(0, 4, next.context).has_value());
  EXPECT_TRUE(next.context.deferred());
}

TEST(TokenQueueTest, GrantToAnAbandonedRequestIsGivenAgain) {
  TokenQueue queue(2);
  queue.Advance(0);
  FakeRequest a, parked, newer, newest;
  EXPECT_EQ(queue.TakeOrPark(0, -1, a.context), 0);
  EXPECT_FALSE(queue.TakeOrPark(0, 0, parked.context).has_value());
  auto grants = queue.Advance(1);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 1);
  // That grant answered a request the worker no longer waits on: its next
  // request still says it last received step 0.
  EXPECT_EQ(queue.TakeOrPark(0, 0, newer.context), 1);
  EXPECT_FALSE(queue.TakeOrPark(0, 1, newest.context).has_value());
}

TEST(TokenQueueTest, GrantGoesToTheParkedRequestsReturnAddress) {
  TokenQueue queue(2);
  queue.Advance(0);
  RequestContext a("worker-0", 7), a2("worker-0", 10), b("worker-1", 8), c("worker-1", 9);
  EXPECT_EQ(queue.TakeOrPark(0, -1, a), 0);
  EXPECT_FALSE(queue.TakeOrPark(0, 0, a2).has_value());
  EXPECT_EQ(queue.TakeOrPark(1, -1, b), 0);
  EXPECT_FALSE(queue.TakeOrPark(1, 0, b).has_value());
  // A newer request of the same worker replaces its parked one.
  EXPECT_FALSE(queue.TakeOrPark(1, 0, c).has_value());
  std::vector<TokenGrant> grants = queue.Advance(1);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].to.address, "worker-0");
  EXPECT_EQ(grants[0].to.request_id, 10u);
  EXPECT_EQ(grants[1].to.address, "worker-1");
  EXPECT_EQ(grants[1].to.request_id, 9u);
}

TEST(TokenQueueTest, LateWorkerGetsTheNewestStepAtOnce) {
  TokenQueue queue(3);
  queue.Advance(0);
  FakeRequest slow;
  EXPECT_EQ(queue.TakeOrPark(2, -1, slow.context), 0);
  queue.Advance(1);
  queue.Advance(2);
  queue.Advance(3);
  FakeRequest late;
  EXPECT_EQ(queue.TakeOrPark(2, 0, late.context), 3);
}

TEST(TokenQueueTest, ResetGoesBackAndHandsOutTheStepAgain) {
  TokenQueue queue(2);
  queue.Advance(7);
  FakeRequest a, again;
  EXPECT_EQ(queue.TakeOrPark(0, 6, a.context), 7);
  EXPECT_FALSE(queue.TakeOrPark(0, 7, again.context).has_value());  // parked
  auto grants = queue.Reset(5);                                     // a restore to step 5
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].step, 5);
  FakeRequest other;
  EXPECT_EQ(queue.TakeOrPark(1, 6, other.context), 5);
}

TEST(TokenQueueTest, AfterResetEachWorkerGetsTheRestoredStepOnce) {
  TokenQueue queue(2);
  queue.Advance(5);
  FakeRequest a, b;
  EXPECT_EQ(queue.TakeOrPark(0, 4, a.context), 5);
  EXPECT_EQ(queue.TakeOrPark(1, 4, b.context), 5);
  queue.Advance(6);
  FakeRequest c;
  EXPECT_EQ(queue.TakeOrPark(0, 5, c.context), 6);
  EXPECT_TRUE(queue.Reset(5).empty());  // a restore to step 5
  // Both hold a token from before the rollback, worker 1 even of step 5.
  FakeRequest ahead, same;
  EXPECT_EQ(queue.TakeOrPark(0, 6, ahead.context), 5);
  EXPECT_EQ(queue.TakeOrPark(1, 5, same.context), 5);
  FakeRequest wait0, wait1;
  EXPECT_FALSE(queue.TakeOrPark(0, 5, wait0.context).has_value());
  EXPECT_FALSE(queue.TakeOrPark(1, 5, wait1.context).has_value());
  EXPECT_EQ(queue.Advance(6).size(), 2u);
}

TEST(TokenQueueTest, CloseReleasesParkedRequests) {
  TokenQueue queue(2);
  queue.Advance(0);
  FakeRequest a, b;
  queue.TakeOrPark(0, -1, a.context);
  queue.TakeOrPark(0, 0, b.context);  // parked
  auto released = queue.Close();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].step, -1);
  FakeRequest after;
  EXPECT_FALSE(queue.TakeOrPark(1, -1, after.context).has_value());
  EXPECT_FALSE(after.context.deferred());  // closed: answered at once, not parked
}

}  // namespace
}  // namespace pst
