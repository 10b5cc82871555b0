#include "transport/shm/shm_bell.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "transport/shm/shm_name.h"
#include "transport/shm/shm_testing.h"
#include "transport/shm/stale_segments.h"

namespace pst {
namespace {

using ShmBellTest = ShmTest;

std::string Path(const std::string& name) { return "/dev/shm" + name; }

std::vector<iovec> Parts(const std::vector<std::string>& parts) {
  std::vector<iovec> out;
  for (const std::string& part : parts) {
    out.push_back({const_cast<char*>(part.data()), part.size()});
  }
  return out;
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

std::string Received(ShmBell& bell) {
  StatusOr<std::optional<std::string>> got = bell.TryReceive();
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  return got.ok() && *got ? **got : "<none>";
}

TEST_F(ShmBellTest, CarriesWholeRecordsInOrderAndWakesAPoll) {
  const std::string name = *ShmSegmentName(cluster_id_, ::getpid(), "ch0.req.bell");
  auto created = ShmBell::Create(name);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  struct stat info;
  ASSERT_EQ(::lstat(Path(name).c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  auto opened = ShmBell::Open(name);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();

  EXPECT_FALSE(Readable((*opened)->fd()));
  EXPECT_FALSE((*opened)->TryReceive()->has_value());
  ASSERT_TRUE((*created)->TrySend(Parts({"head", "er"})));
  ASSERT_TRUE((*created)->TrySend(Parts({""})));
  ASSERT_TRUE((*created)->TrySend(Parts({std::string(3000, 'x')})));
  EXPECT_TRUE(Readable((*opened)->fd()));
  EXPECT_EQ(Received(**opened), "header");
  EXPECT_EQ(Received(**opened), "");
  EXPECT_EQ(Received(**opened), std::string(3000, 'x'));
  EXPECT_EQ(Received(**opened), "<none>");
  EXPECT_FALSE(Readable((*opened)->fd()));

  // Both ends may write: the same pipe carries the other way too.
  ASSERT_TRUE((*opened)->TrySend(Parts({"back"})));
  EXPECT_EQ(Received(**created), "back");
}

TEST_F(ShmBellTest, RefusesARecordOverTheMaximumAndOneAFullPipeCannotTakeWhole) {
  const std::string name = *ShmSegmentName(cluster_id_, ::getpid(), "big.bell");
  auto bell = ShmBell::Create(name);
  ASSERT_TRUE(bell.ok()) << bell.status().ToString();
  EXPECT_FALSE((*bell)->TrySend(Parts({std::string(ShmBell::max_record_bytes() + 1, 'x')})));
  EXPECT_FALSE(Readable((*bell)->fd())) << "nothing of a refused record is written";

  const std::string record(1000, 'r');
  int sent = 0;
  while ((*bell)->TrySend(Parts({record}))) ++sent;
  ASSERT_GT(sent, 10);
  // Every record written comes out whole, none of the refused one.
  int received = 0;
  for (;;) {
    StatusOr<std::optional<std::string>> got = (*bell)->TryReceive();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    if (!*got) break;
    ASSERT_EQ(**got, record);
    ++received;
  }
  EXPECT_EQ(received, sent);
}

TEST_F(ShmBellTest, SaysDataLossWhenThePipeHoldsNoRecords) {
  const std::string name = *ShmSegmentName(cluster_id_, ::getpid(), "junk.bell");
  auto bell = ShmBell::Create(name);
  ASSERT_TRUE(bell.ok()) << bell.status().ToString();
  const int raw = ::open(Path(name).c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(raw, 0);
  const uint32_t huge = 1u << 30;
  ASSERT_EQ(::write(raw, &huge, sizeof(huge)), static_cast<ssize_t>(sizeof(huge)));
  ::close(raw);
  StatusOr<std::optional<std::string>> got = (*bell)->TryReceive();
  EXPECT_EQ(got.status().code(), Code::kDataLoss) << got.status().ToString();
  EXPECT_NE(got.status().message().find(name), std::string::npos);
}

TEST_F(ShmBellTest, OpenRefusesWhatIsNotThisUsersPrivatePipe) {
  const std::string missing = *ShmSegmentName(cluster_id_, ::getpid(), "missing.bell");
  EXPECT_EQ(ShmBell::Open(missing).status().code(), Code::kNotFound);

  const std::string file = *ShmSegmentName(cluster_id_, ::getpid(), "file.bell");
  const int fd = ::open(Path(file).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(ShmBell::Open(file).status().code(), Code::kPermissionDenied);
  ::unlink(Path(file).c_str());

  const std::string open_to_all = *ShmSegmentName(cluster_id_, ::getpid(), "wide.bell");
  ASSERT_EQ(::mkfifo(Path(open_to_all).c_str(), 0600), 0);
  ASSERT_EQ(::chmod(Path(open_to_all).c_str(), 0666), 0);
  const Status wide = ShmBell::Open(open_to_all).status();
  EXPECT_EQ(wide.code(), Code::kPermissionDenied) << wide.ToString();
  EXPECT_NE(wide.message().find("666"), std::string::npos) << wide.ToString();
  ::unlink(Path(open_to_all).c_str());

  EXPECT_EQ(ShmBell::Open("/etc/passwd").status().code(), Code::kInvalidArgument);
}

TEST_F(ShmBellTest, TheCreatorUnlinksAndAKilledCreatorsPipeIsCleanedUp) {
  const std::string name = *ShmSegmentName(cluster_id_, ::getpid(), "ch1.rep.bell");
  {
    auto bell = ShmBell::Create(name);
    ASSERT_TRUE(bell.ok()) << bell.status().ToString();
    auto peer = ShmBell::Open(name);
    ASSERT_TRUE(peer.ok());
    (*bell)->Unlink();
    EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty());
    // Unlinked, the pipe still carries records between those who opened it.
    ASSERT_TRUE((*bell)->TrySend(Parts({"still"})));
    EXPECT_EQ(Received(**peer), "still");
  }
  { ASSERT_TRUE(ShmBell::Create(name).ok()); }
  EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty()) << "the destructor unlinks";

  ForkedChild task([&](int ready_fd) {
    auto left = ShmBell::Create(*ShmSegmentName(cluster_id_, ::getpid(), "ch2.req.bell"));
    if (!left.ok()) return 1;
    SignalReady(ready_fd);
    while (true) ::pause();
  });
  ASSERT_TRUE(task.WaitReady());
  task.Kill();
  ASSERT_EQ(ShmEntriesOf(cluster_id_).size(), 1u);
  const StatusOr<int> removed = CleanStaleSegments(cluster_id_);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 1);
  EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty());
}

}  // namespace
}  // namespace pst
