#include "transport/shm/shm_testing.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include "transport/shm/shm_name.h"

namespace pst {
namespace {

uint64_t RandomClusterId() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) | device();
}

}  // namespace

std::vector<std::string> ShmEntriesOf(uint64_t cluster_id) {
  const std::string prefix = ShmClusterPrefix(cluster_id);
  std::vector<std::string> entries;
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return entries;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) entries.push_back(name);
  }
  ::closedir(dir);
  return entries;
}

void ShmTest::SetUp() { cluster_id_ = AnotherClusterId(); }

void ShmTest::TearDown() {
  for (uint64_t cluster : clusters_) {
    const std::vector<std::string> left = ShmEntriesOf(cluster);
    EXPECT_TRUE(left.empty()) << left.size() << " segment(s) left, first /dev/shm/" << left[0];
    for (const std::string& entry : left) ::shm_unlink(("/" + entry).c_str());
  }
}

uint64_t ShmTest::AnotherClusterId() {
  clusters_.push_back(RandomClusterId());
  return clusters_.back();
}

void SignalReady(int ready_fd) {
  const char byte = 1;
  while (::write(ready_fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

ForkedChild::ForkedChild(const std::function<int(int ready_fd)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return;
  }
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(fds[0]);
    // _exit: no destructor or atexit handler of the test's process runs twice.
    ::_exit(body(fds[1]));
  }
  ::close(fds[1]);
  ready_fd_ = fds[0];
  if (pid_ < 0) ADD_FAILURE() << "fork failed";
}

ForkedChild::~ForkedChild() {
  Kill();
  if (ready_fd_ >= 0) ::close(ready_fd_);
}

bool ForkedChild::WaitReady() {
  char byte;
  ssize_t n;
  do {
    n = ::read(ready_fd_, &byte, 1);
  } while (n < 0 && errno == EINTR);
  return n == 1;
}

void ForkedChild::Kill() {
  // pid_ > 0 only: kill(-1, ...) would signal every process this user may.
  if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL);
  Wait();
}

bool ForkedChild::Exited() {
  if (pid_ <= 0 || reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  Reaped(status);
  return true;
}

int ForkedChild::Wait() {
  if (pid_ <= 0 || reaped_) return exit_code_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  Reaped(status);
  return exit_code_;
}

void ForkedChild::Reaped(int status) {
  reaped_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace pst
