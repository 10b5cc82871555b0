// ProgressCounter: a consumer waits until the producer has handed on enough
// items. (Reset is exercised by every second step of
// model/parallel/pipelined_model_test.cc.)
#include "model/parallel/progress_counter.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace pst {
namespace {

TEST(ProgressCounterTest, WaitForWhatIsDoneReturnsAtOnce) {
  ProgressCounter counter;
  counter.WaitFor(0);
  counter.Advance();
  counter.Advance();
  counter.WaitFor(1);
  counter.WaitFor(2);
}

// The consumer sees every item the producer wrote before each Advance.
TEST(ProgressCounterTest, AConsumerWaitsForTheProducer) {
  ProgressCounter counter;
  std::vector<int> items(100, 0);
  std::thread producer([&] {
    for (size_t i = 0; i < items.size(); ++i) {
      items[i] = static_cast<int>(i) + 1;
      counter.Advance();
    }
  });
  for (size_t i = 0; i < items.size(); ++i) {
    counter.WaitFor(static_cast<int>(i) + 1);
    EXPECT_EQ(items[i], static_cast<int>(i) + 1);
  }
  producer.join();
}

}  // namespace
}  // namespace pst
