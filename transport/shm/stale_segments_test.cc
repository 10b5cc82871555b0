#include "transport/shm/stale_segments.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "transport/shm/shm_name.h"
#include "transport/shm/shm_segment.h"
#include "transport/shm/shm_testing.h"

namespace pst {
namespace {

bool Listed(const std::vector<std::string>& entries, const std::string& name) {
  return std::find(entries.begin(), entries.end(), name.substr(1)) != entries.end();
}

// A bare shm object under `name`, as something other than ShmSegment made it.
void MakeRawObject(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0) << name;
  ::close(fd);
}

using StaleSegmentsTest = ShmTest;

TEST_F(StaleSegmentsTest, RemovesAKilledTasksSegmentsKeepingLiveOnesAndOtherClusters) {
  const uint64_t other_cluster = AnotherClusterId();
  // A task that makes a segment in each cluster and is then SIGKILLed,
  // so that no destructor unlinks them.
  ForkedChild task([&](int ready_fd) {
    auto mine = ShmSegment::Create(cluster_id_, "conn.0", 4096);
    auto other = ShmSegment::Create(other_cluster, "conn.0", 4096);
    if (!mine.ok() || !other.ok()) return 1;
    SignalReady(ready_fd);
    while (true) ::pause();
  });
  ASSERT_TRUE(task.WaitReady());
  const std::string dead = *ShmSegmentName(cluster_id_, task.pid(), "conn.0");
  const std::string dead_other_cluster = *ShmSegmentName(other_cluster, task.pid(), "conn.0");
  task.Kill();

  auto live = ShmSegment::Create(cluster_id_, "conn.0", 4096);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  // Names in the cluster's form that are not a dead task's segment of this user.
  const std::string not_a_pid = "/" + ShmClusterPrefix(cluster_id_) + "x-conn.0";
  MakeRawObject(not_a_pid);
  const std::string other_users = *ShmSegmentName(cluster_id_, task.pid(), "other-user");
  MakeRawObject(other_users);
  const bool as_root = ::geteuid() == 0;
  if (as_root) ASSERT_EQ(::chown(("/dev/shm" + other_users).c_str(), 65534, 65534), 0);

  const StatusOr<int> removed = CleanStaleSegments(cluster_id_);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  const std::vector<std::string> left = ShmEntriesOf(cluster_id_);
  EXPECT_FALSE(Listed(left, dead));
  EXPECT_TRUE(Listed(left, (*live)->name()));
  EXPECT_TRUE(Listed(left, not_a_pid));
  EXPECT_TRUE(Listed(ShmEntriesOf(other_cluster), dead_other_cluster));
  if (as_root) {
    EXPECT_EQ(*removed, 1);
    EXPECT_TRUE(Listed(left, other_users));
  } else {
    EXPECT_EQ(*removed, 2) << "without root the 'other user's' object is this user's";
  }

  // The other cluster's next start cleans its own.
  const StatusOr<int> removed_other = CleanStaleSegments(other_cluster);
  ASSERT_TRUE(removed_other.ok()) << removed_other.status().ToString();
  EXPECT_EQ(*removed_other, 1);
  EXPECT_TRUE(ShmEntriesOf(other_cluster).empty());
  ::shm_unlink(not_a_pid.c_str());
  ::shm_unlink(other_users.c_str());
}

TEST_F(StaleSegmentsTest, RemovesNothingWhileItsCreatorLives) {
  auto live = ShmSegment::Create(cluster_id_, "conn.0", 4096);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  const StatusOr<int> removed = CleanStaleSegments(cluster_id_);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 0);
  EXPECT_EQ(ShmEntriesOf(cluster_id_).size(), 1u);
}

}  // namespace
}  // namespace pst
