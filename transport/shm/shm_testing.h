// What the transport/shm tests share: a random cluster id per test with a
// check that the test leaves none of its segments in /dev/shm, and a forked
// child process that the test can wait for, kill and always reaps.
#ifndef PST_TRANSPORT_SHM_SHM_TESTING_H_
#define PST_TRANSPORT_SHM_SHM_TESTING_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pst {

// The /dev/shm entries named for `cluster_id`.
std::vector<std::string> ShmEntriesOf(uint64_t cluster_id);

// Each test runs under cluster ids no parallel run shares; TearDown fails
// the test for, and removes, any segment of them left in /dev/shm.
class ShmTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // One more cluster id, checked at TearDown as cluster_id_ is.
  uint64_t AnotherClusterId();

  uint64_t cluster_id_ = 0;

 private:
  std::vector<uint64_t> clusters_;
};

// The child calls this to tell the test it reached a point (WaitReady).
void SignalReady(int ready_fd);

// A forked child running `body`, which exits with body's return value (a
// child never returns into the test framework; it reports through its exit
// code). The destructor SIGKILLs and reaps a child still running, so a
// failed assertion leaves no process behind.
class ForkedChild {
 public:
  explicit ForkedChild(const std::function<int(int ready_fd)>& body);
  ~ForkedChild();
  ForkedChild(const ForkedChild&) = delete;
  ForkedChild& operator=(const ForkedChild&) = delete;

  pid_t pid() const { return pid_; }
  // Blocks until the child calls SignalReady; false when it exits first.
  bool WaitReady();
  // SIGKILL unless already reaped, then reaps it, so that its pid reads as
  // gone.
  void Kill();
  // Whether it has exited (then reaped), without waiting.
  bool Exited();
  // Reaps it (once): its exit code, or 128 + the signal that ended it.
  int Wait();

 private:
  void Reaped(int wait_status);

  pid_t pid_ = -1;
  int ready_fd_ = -1;  // the read end; the child holds the write end
  bool reaped_ = false;
  int exit_code_ = -1;  // once reaped; -1 when the fork failed
};

}  // namespace pst

#endif  // PST_TRANSPORT_SHM_SHM_TESTING_H_
