// TokenQueue: one token per worker and step, re-sent requests, late workers,
// resets after a restore, closing. No transport.
#include "scheduler/token_queue.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

using Verdict = TokenAnswer::Verdict;

// The step granted, or -1 when the worker waits (-2: told to stop).
int64_t Take(TokenQueue& queue, int worker, int64_t last_received) {
  const TokenAnswer answer = queue.Take(worker, last_received);
  switch (answer.verdict) {
    case Verdict::kGo: return answer.step;
    case Verdict::kWait: return -1;
    case Verdict::kStop: return -2;
  }
  return -3;
}

using Workers = std::vector<int>;

TEST(TokenQueueTest, NothingBeforeTheFirstStepOpens) {
  TokenQueue queue(2);
  EXPECT_EQ(Take(queue, 0, -1), -1);
  EXPECT_EQ(queue.current_step(), std::nullopt);
  EXPECT_EQ(queue.Advance(0), (Workers{0}));
  EXPECT_EQ(queue.current_step(), 0);
}

TEST(TokenQueueTest, OneTokenPerWorkerPerStep) {
  TokenQueue queue(2);
  queue.Advance(0);
  EXPECT_EQ(Take(queue, 0, -1), 0);
  EXPECT_EQ(Take(queue, 1, -1), 0);
  EXPECT_EQ(Take(queue, 0, 0), -1);  // waits
  EXPECT_EQ(queue.Advance(1), (Workers{0}));
  // It received step 1 already.
  EXPECT_EQ(Take(queue, 0, 1), -1);
}

TEST(TokenQueueTest, ReSentRequestGetsTheSameGrant) {
  TokenQueue queue(2);
  queue.Advance(4);
  EXPECT_EQ(Take(queue, 0, 3), 4);
  // The worker did not receive the first grant: it still last received 3.
  EXPECT_EQ(Take(queue, 0, 3), 4);
  // Now it holds step 4: it waits for step 5.
  EXPECT_EQ(Take(queue, 0, 4), -1);
}

TEST(TokenQueueTest, GrantToAnAbandonedRequestIsGivenAgain) {
  TokenQueue queue(2);
  queue.Advance(0);
  EXPECT_EQ(Take(queue, 0, -1), 0);
  EXPECT_EQ(Take(queue, 0, 0), -1);
  EXPECT_EQ(queue.Advance(1), (Workers{0}));
  // That grant answered a request the worker no longer waits on: its next
  // request still says it last received step 0.
  EXPECT_EQ(Take(queue, 0, 0), 1);
  EXPECT_EQ(Take(queue, 0, 1), -1);
}

TEST(TokenQueueTest, AWorkerWaitingTwiceIsGrantedOnce) {
  TokenQueue queue(2);
  queue.Advance(0);
  EXPECT_EQ(Take(queue, 0, -1), 0);
  EXPECT_EQ(Take(queue, 1, -1), 0);
  EXPECT_EQ(Take(queue, 1, 0), -1);
  EXPECT_EQ(Take(queue, 1, 0), -1);  // a newer request replaces the first
  EXPECT_EQ(queue.Advance(1), (Workers{1}));
  EXPECT_TRUE(queue.Advance(2).empty());
}

TEST(TokenQueueTest, AWaitingWorkerGrantedAtOnceWaitsNoMore) {
  TokenQueue queue(2);
  queue.Advance(0);
  EXPECT_EQ(Take(queue, 0, -1), 0);
  EXPECT_EQ(Take(queue, 0, 0), -1);
  // Its first grant was lost: the re-sent request says it holds nothing.
  EXPECT_EQ(Take(queue, 0, -1), 0);
  EXPECT_TRUE(queue.Advance(1).empty());
}

TEST(TokenQueueTest, LateWorkerGetsTheNewestStepAtOnce) {
  TokenQueue queue(3);
  queue.Advance(0);
  EXPECT_EQ(Take(queue, 2, -1), 0);
  queue.Advance(1);
  queue.Advance(2);
  queue.Advance(3);
  EXPECT_EQ(Take(queue, 2, 0), 3);
}

TEST(TokenQueueTest, ResetGoesBackAndHandsOutTheStepAgain) {
  TokenQueue queue(2);
  queue.Advance(7);
  EXPECT_EQ(Take(queue, 0, 6), 7);
  EXPECT_EQ(Take(queue, 0, 7), -1);         // waits
  EXPECT_EQ(queue.Reset(5), (Workers{0}));  // a restore to step 5
  EXPECT_EQ(Take(queue, 1, 6), 5);
}

TEST(TokenQueueTest, AfterResetEachWorkerGetsTheRestoredStepOnce) {
  TokenQueue queue(2);
  queue.Advance(5);
  EXPECT_EQ(Take(queue, 0, 4), 5);
  EXPECT_EQ(Take(queue, 1, 4), 5);
  queue.Advance(6);
  EXPECT_EQ(Take(queue, 0, 5), 6);
  EXPECT_TRUE(queue.Reset(5).empty());  // a restore to step 5
  // Both hold a token from before the rollback, worker 1 even of step 5.
  EXPECT_EQ(Take(queue, 0, 6), 5);
  EXPECT_EQ(Take(queue, 1, 5), 5);
  EXPECT_EQ(Take(queue, 0, 5), -1);
  EXPECT_EQ(Take(queue, 1, 5), -1);
  EXPECT_EQ(queue.Advance(6), (Workers{0, 1}));
}

TEST(TokenQueueTest, CloseStopsTheWaitingAndEveryLaterRequest) {
  TokenQueue queue(2);
  queue.Advance(0);
  EXPECT_EQ(Take(queue, 0, -1), 0);
  EXPECT_EQ(Take(queue, 0, 0), -1);
  EXPECT_EQ(queue.Close(), (Workers{0}));
  EXPECT_EQ(Take(queue, 1, -1), -2);
  EXPECT_TRUE(queue.Advance(1).empty());
}

}  // namespace
}  // namespace pst
