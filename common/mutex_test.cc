#include "common/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(MutexTest, WaitReturnsHoldingTheMutexOnceNotified) {
  Mutex mu;
  CondVar changed;
  bool ready = false;  // guarded by mu
  std::thread setter([&] {
    MutexLock lock(mu);
    ready = true;
    changed.NotifyAll();
  });
  {
    MutexLock lock(mu);
    const auto give_up = steady_clock::now() + std::chrono::seconds(30);
    while (!ready && changed.WaitUntil(mu, give_up)) {
    }
    EXPECT_TRUE(ready);
  }
  setter.join();
}

TEST(MutexTest, WaitUntilReturnsFalseAtTheDeadline) {
  Mutex mu;
  CondVar never;
  MutexLock lock(mu);
  const auto deadline = steady_clock::now() + milliseconds(20);
  bool notified = true;
  while (notified && steady_clock::now() < deadline) notified = never.WaitUntil(mu, deadline);
  EXPECT_FALSE(notified);
  EXPECT_GE(steady_clock::now(), deadline);
}

// Unlock lets another thread in; Lock takes the mutex back.
TEST(MutexTest, ALockCanLetGoForAWhile) {
  Mutex mu;
  int value = 0;  // guarded by mu
  MutexLock lock(mu);
  lock.Unlock();
  std::thread other([&] {
    MutexLock inner(mu);
    value = 1;
  });
  other.join();
  lock.Lock();
  EXPECT_EQ(value, 1);
}

// Readers share the mutex: a second reader gets in while the first holds it
// (were the reader lock exclusive, this would never finish).
TEST(SharedMutexTest, ReadersShareAndSeeTheWritersValue) {
  SharedMutex mu;
  int value = 0;  // guarded by mu
  {
    WriterMutexLock lock(mu);
    value = 7;
  }
  ReaderMutexLock lock(mu);
  int seen = 0;
  std::thread other([&] {
    ReaderMutexLock inner(mu);
    seen = value;
  });
  other.join();
  EXPECT_EQ(seen, 7);
  EXPECT_EQ(value, 7);
}

}  // namespace
}  // namespace pst
