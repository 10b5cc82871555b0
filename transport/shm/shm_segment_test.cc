#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "transport/shm/shm_layout.h"
#include "transport/shm/shm_name.h"
#include "transport/shm/shm_testing.h"

namespace pst {
namespace {

std::string DevShmPath(const std::string& name) { return "/dev/shm" + name; }

bool Exists(const std::string& name) {
  struct stat info;
  return ::stat(DevShmPath(name).c_str(), &info) == 0;
}

// Overwrites `bytes` at `offset` of segment `name`, as a foreign or damaged
// segment would have them.
void Overwrite(const std::string& name, size_t offset, const void* bytes, size_t n) {
  const int fd = ::open(DevShmPath(name).c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes, n, static_cast<off_t>(offset)), static_cast<ssize_t>(n));
  ::close(fd);
}

// The bytes of the mapping that holds `address` that this process has
// mapped in (its page-table entries: "Rss" in /proc/self/smaps); -1 when no
// mapping holds it.
long ResidentBytesOfMappingAt(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    // A mapping's first line is "begin-end perms ..."; its fields ("Rss:
    // 4 kB") follow it.
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &begin, &end) == 2) {
      inside = begin <= at && at < end;
      continue;
    }
    long kb = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %ld kB", &kb) == 1) return kb * 1024;
  }
  return -1;
}

using ShmSegmentTest = ShmTest;

TEST_F(ShmSegmentTest, CreatesA0600SegmentNamedForTheClusterAndPidThatThePeerOpens) {
  StatusOr<std::unique_ptr<ShmSegment>> created = ShmSegment::Create(cluster_id_, "conn.1", 4096);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string name = (*created)->name();
  EXPECT_EQ(name, *ShmSegmentName(cluster_id_, ::getpid(), "conn.1"));
  struct stat info;
  ASSERT_EQ(::stat(DevShmPath(name).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
  EXPECT_EQ(info.st_uid, ::geteuid());
  EXPECT_EQ(static_cast<size_t>(info.st_size), shm_layout::kSegmentHeaderBytes + 4096);

  StatusOr<std::unique_ptr<ShmSegment>> opened = ShmSegment::Open(name, cluster_id_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ((*opened)->cluster_id(), cluster_id_);
  EXPECT_EQ((*opened)->creator_pid(), ::getpid());
  EXPECT_EQ((*opened)->capacity(), 4096u);
  // Both map the same memory.
  (*created)->data()[100] = 42;
  EXPECT_EQ((*opened)->data()[100], 42);

  opened->reset();
  EXPECT_TRUE(Exists(name)) << "only the creator unlinks";
  created->reset();
  EXPECT_FALSE(Exists(name));
}

TEST_F(ShmSegmentTest, BothEndsHaveTheRingMappedBeforeTheFirstMessage) {
  constexpr size_t kCapacity = size_t{4} << 20;
  StatusOr<std::unique_ptr<ShmSegment>> created =
      ShmSegment::Create(cluster_id_, "conn.1", kCapacity);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  StatusOr<std::unique_ptr<ShmSegment>> opened = ShmSegment::Open((*created)->name(), cluster_id_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  // Mapped in whole at both ends before the ring is used, so that its first
  // pass takes no page fault per page on the step's pushes and pulls
  // (without MAP_POPULATE only the header's page is mapped here).
  EXPECT_GE(ResidentBytesOfMappingAt((*created)->data()), static_cast<long>(kCapacity));
  EXPECT_GE(ResidentBytesOfMappingAt((*opened)->data()), static_cast<long>(kCapacity));
}

TEST_F(ShmSegmentTest, AForkedChildsCopyLeavesTheNameToTheCreator) {
  StatusOr<std::unique_ptr<ShmSegment>> segment = ShmSegment::Create(cluster_id_, "fork", 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  ForkedChild child([&](int) {
    segment->reset();
    return 0;
  });
  EXPECT_EQ(child.Wait(), 0);
  EXPECT_TRUE(Exists((*segment)->name()));
}

TEST_F(ShmSegmentTest, RefusesAForeignClusterIdNamingTheSegment) {
  auto segment = ShmSegment::Create(cluster_id_, "conn", 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  const StatusOr<std::unique_ptr<ShmSegment>> opened =
      ShmSegment::Open((*segment)->name(), cluster_id_ ^ 1);
  EXPECT_EQ(opened.status().code(), Code::kPermissionDenied);
  EXPECT_NE(opened.status().message().find((*segment)->name()), std::string::npos)
      << opened.status().ToString();
}

TEST_F(ShmSegmentTest, RefusesAModeOtherThan0600) {
  auto segment = ShmSegment::Create(cluster_id_, "conn", 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  ASSERT_EQ(::chmod(DevShmPath((*segment)->name()).c_str(), 0644), 0);
  const StatusOr<std::unique_ptr<ShmSegment>> opened =
      ShmSegment::Open((*segment)->name(), cluster_id_);
  EXPECT_EQ(opened.status().code(), Code::kPermissionDenied);
  EXPECT_NE(opened.status().message().find("0644"), std::string::npos)
      << opened.status().ToString();
}

TEST_F(ShmSegmentTest, RefusesAnotherUsersSegment) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user takes root";
  auto segment = ShmSegment::Create(cluster_id_, "conn", 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  ASSERT_EQ(::chown(DevShmPath((*segment)->name()).c_str(), 65534, 65534), 0);
  const StatusOr<std::unique_ptr<ShmSegment>> opened =
      ShmSegment::Open((*segment)->name(), cluster_id_);
  EXPECT_EQ(opened.status().code(), Code::kPermissionDenied);
  EXPECT_NE(opened.status().message().find("uid 65534"), std::string::npos)
      << opened.status().ToString();
}

TEST_F(ShmSegmentTest, RefusesABadMagicOrLayoutVersion) {
  auto segment = ShmSegment::Create(cluster_id_, "conn", 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  const std::string name = (*segment)->name();
  const uint32_t version = shm_layout::kLayoutVersion + 1;
  Overwrite(name, offsetof(shm_layout::SegmentHeader, layout_version), &version, sizeof(version));
  EXPECT_EQ(ShmSegment::Open(name, cluster_id_).status().code(), Code::kInvalidArgument);
  const uint64_t magic = 0;
  Overwrite(name, offsetof(shm_layout::SegmentHeader, magic), &magic, sizeof(magic));
  const StatusOr<std::unique_ptr<ShmSegment>> opened = ShmSegment::Open(name, cluster_id_);
  EXPECT_EQ(opened.status().code(), Code::kInvalidArgument);
  EXPECT_NE(opened.status().message().find(name), std::string::npos) << opened.status().ToString();
}

TEST_F(ShmSegmentTest, RefusesASegmentTooSmallForItsHeader) {
  const std::string name = *ShmSegmentName(cluster_id_, ::getpid(), "small");
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8), 0);
  ::close(fd);
  EXPECT_EQ(ShmSegment::Open(name, cluster_id_).status().code(), Code::kInvalidArgument);
  ::shm_unlink(name.c_str());
}

TEST_F(ShmSegmentTest, SaysNotFoundForAMissingName) {
  EXPECT_EQ(ShmSegment::Open(*ShmSegmentName(cluster_id_, ::getpid(), "none"), cluster_id_)
                .status()
                .code(),
            Code::kNotFound);
}

TEST_F(ShmSegmentTest, RefusesABadCapacityOrPurposeAndAnExistingName) {
  EXPECT_EQ(ShmSegment::Create(cluster_id_, "conn", 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmSegment::Create(cluster_id_, "conn", 17).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmSegment::Create(cluster_id_, "a/b", 4096).status().code(), Code::kInvalidArgument);
  auto first = ShmSegment::Create(cluster_id_, "conn", 4096);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(ShmSegment::Create(cluster_id_, "conn", 4096).ok());
  EXPECT_TRUE(Exists((*first)->name())) << "a refused Create leaves the existing segment";
}

}  // namespace
}  // namespace pst
