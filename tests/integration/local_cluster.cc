#include "tests/integration/local_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/mutex.h"

namespace pst {
namespace {

// The folders MakeTestDir made, removed once every test of the binary has
// passed; a failed run keeps them (its logs are there).
class TestDirs : public ::testing::Environment {
 public:
  static void Add(const std::string& dir) {
    MutexLock lock(mu_);
    dirs_.push_back(dir);
  }
  void TearDown() override {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    MutexLock lock(mu_);
    for (const std::string& dir : dirs_) {
      std::error_code ignored;  // a child still writing there: left behind
      std::filesystem::remove_all(dir, ignored);
    }
    dirs_.clear();
  }

 private:
  static inline Mutex mu_;
  static inline std::vector<std::string> dirs_ GUARDED_BY(mu_);
};
[[maybe_unused]] ::testing::Environment* const kTestDirs =
    ::testing::AddGlobalTestEnvironment(new TestDirs);

// SO_REUSEADDR: a port whose old connections sit in TIME_WAIT still counts
// as free; only a live listener makes bind fail.
int BindLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  CHECK_GE(fd, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string Hosts(const std::vector<int>& ports, size_t begin, size_t count) {
  std::string out;
  for (size_t i = begin; i < begin + count; ++i) {
    out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(ports[i]);
  }
  return out;
}

}  // namespace

// Claims `port` for this process across every test process of the machine:
// a file /tmp/pst-port-claims/PORT created exclusively. A port is free only
// until a child binds it, and the kernel may hand the same free port to
// another test's bind(0) in the meantime (two suites running in parallel
// then start a ps each on it, and one fails "Address already in use").
// Claims older than kClaimLifetime are stale and taken over.
bool ClaimPort(int port) {
  constexpr auto kClaimLifetime = std::chrono::minutes(10);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "pst-port-claims";
  std::error_code error;
  fs::create_directories(dir, error);
  const fs::path claim = dir / std::to_string(port);
  const auto written = fs::last_write_time(claim, error);
  if (!error && fs::file_time_type::clock::now() - written > kClaimLifetime)
    fs::remove(claim, error);
  const int fd = ::open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::vector<int> FreePorts(int count) {
  std::vector<int> fds, ports;
  while (static_cast<int>(ports.size()) < count) {
    const int fd = BindLoopback(0);
    CHECK_GE(fd, 0) << "no free port";
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    fds.push_back(fd);  // held until all are chosen: no port twice here
    const int port = ntohs(addr.sin_port);
    if (ClaimPort(port)) ports.push_back(port);
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

bool PortIsFree(int port) {
  const int fd = BindLoopback(port);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::string BinDir() {
  const char* dir = std::getenv("PST_BIN_DIR");
  CHECK(dir != nullptr) << "PST_BIN_DIR is not set (run the tests through ctest)";
  return dir;
}

std::string MakeTestPath(std::string name) {
  // A parameterized test's name ("Test/0") must not make a folder above it.
  std::replace(name.begin(), name.end(), '/', '_');
  const std::string path =
      (std::filesystem::temp_directory_path() / ("pst-" + name + "-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(path);
  TestDirs::Add(path);
  return path;
}

std::string MakeTestDir(const std::string& name) {
  const std::string dir = MakeTestPath(name);
  std::filesystem::create_directories(dir);
  return dir;
}

LocalCluster::LocalCluster(int num_ps, int num_workers, std::string dir)
    : num_ps_(num_ps),
      num_workers_(num_workers),
      dir_(std::move(dir)),
      ports_(FreePorts(1 + num_ps + num_workers)) {}

std::vector<std::string> LocalCluster::ClusterFlags() const {
  return {"--chief_host=127.0.0.1:" + std::to_string(ports_[0]),
          "--ps_hosts=" + Hosts(ports_, 1, num_ps_),
          "--worker_hosts=" + Hosts(ports_, 1 + num_ps_, num_workers_)};
}

ChildProcess& LocalCluster::StartTask(const std::string& role, int index,
                                      const std::vector<std::string>& flags,
                                      const std::vector<std::string>& env) {
  const std::string name = role + "-" + std::to_string(index);
  std::vector<std::string> argv = {BinDir() + "/" + role};
  for (const auto& f : ClusterFlags()) argv.push_back(f);
  argv.push_back("--task_index=" + std::to_string(index));
  for (const auto& f : flags) argv.push_back(f);
  auto child = ChildProcess::Start(argv, dir_ + "/" + name + ".log", env);
  CHECK(child.ok()) << child.status().ToString();
  auto& slot = tasks_[name];
  slot = std::move(child).value();
  return *slot;
}

void LocalCluster::StartAll(const std::vector<std::string>& flags) {
  for (int k = 0; k < num_ps_; ++k) StartTask("ps", k, flags);
  StartTask("chief", 0, flags);
  for (int i = 0; i < num_workers_; ++i) StartTask("worker", i, flags);
}

ChildProcess& LocalCluster::task(const std::string& role, int index) {
  auto it = tasks_.find(role + "-" + std::to_string(index));
  CHECK(it != tasks_.end()) << role << "-" << index << " was not started";
  return *it->second;
}

std::vector<TaskExit> LocalCluster::WaitAll(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<TaskExit> exits;
  for (auto& [name, child] : tasks_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto code = child->Wait(std::max(left, std::chrono::milliseconds(0)));
    exits.push_back({name, code.value_or(-1)});
  }
  return exits;
}

}  // namespace pst
