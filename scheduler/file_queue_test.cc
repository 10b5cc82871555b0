#include "scheduler/file_queue.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(FileQueueTest, HandsOutTheOldestNameFirstOneWorkerPerFile) {
  FileQueue q;
  EXPECT_EQ(q.Add({"part-2", "part-1"}), 2);
  EXPECT_EQ(q.Next(0), "part-1");
  EXPECT_EQ(q.Next(1), "part-2");
  EXPECT_EQ(q.Next(2), std::nullopt);
  EXPECT_EQ(q.Add({"part-1", "part-2", "part-3"}), 1);  // only the new one
  EXPECT_EQ(q.Next(2), "part-3");
  EXPECT_EQ(q.held(), 3u);
}

TEST(FileQueueTest, AWorkerAskingAgainGetsTheFileItHolds) {
  FileQueue q;
  q.Add({"a", "b"});
  EXPECT_EQ(q.Next(0), "a");
  EXPECT_EQ(q.Next(0), "a");  // restarted under the same index: resumes it
  EXPECT_TRUE(q.Finish(0, "a"));
  EXPECT_EQ(q.Next(0), "b");
}

TEST(FileQueueTest, AFinishedFileIsNeverHandedOutAgain) {
  FileQueue q;
  q.Add({"a"});
  q.Next(0);
  EXPECT_TRUE(q.Finish(0, "a"));
  q.Add({"a"});
  EXPECT_EQ(q.Next(1), std::nullopt);
  EXPECT_EQ(q.finished(), 1u);
}

TEST(FileQueueTest, AGoneWorkersFileWaitsFirstInLine) {
  FileQueue q;
  q.Add({"a", "b", "c"});
  EXPECT_EQ(q.Next(0), "a");
  EXPECT_EQ(q.Next(1), "b");
  q.Release(0);
  EXPECT_EQ(q.waiting(), 2u);
  EXPECT_EQ(q.Next(2), "a");
  // The gone worker's late report does not finish a file it gave up.
  EXPECT_FALSE(q.Finish(0, "a"));
  EXPECT_TRUE(q.Finish(2, "a"));
  q.Release(5);  // holds nothing: nothing changes
  EXPECT_EQ(q.waiting(), 1u);
}

TEST(FileQueueTest, ReopenedEveryFileNotHeldWaitsAgain) {
  FileQueue q;
  q.Add({"a", "b", "c"});
  q.Next(0);
  EXPECT_TRUE(q.Finish(0, "a"));
  EXPECT_EQ(q.Next(1), "b");
  q.Reopen();
  EXPECT_EQ(q.waiting(), 2u);  // a (finished) and c; b stays with worker 1
  EXPECT_EQ(q.Next(2), "a");
  EXPECT_EQ(q.Next(1), "b");
}

}  // namespace
}  // namespace pst
