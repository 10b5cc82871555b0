// bench_soak: many clients hammering one ps at once, counting lost updates
// and watching memory.
//
// Measures, on 127.0.0.1 TCP loopback:
//  - one ps: by default a real `ps` process (the executable beside this one,
//    --ps_threads handler threads), or with --ps_mode=inprocess an
//    RpcServer + PsService in this process (wired as in ps/ps_task.cc minus
//    the chief's ShardAppliedNotifier); async mode, SGD at learning rate 1, holding
//    the global step, "counter" (float32 [1], zeros) and "big" (float32,
//    --big_bytes, zeros);
//  - --clients threads, each with its own ZeroMQ context and PsClient, each
//    doing --rounds rounds of Pull(counter, big) then Push(-1 for counter,
//    a small gradient for big, increment the global step), one request in
//    flight per client, all clients at once;
//  - rounds/s and payload MB/s over the whole soak (payload = tensor bytes
//    pulled + pushed; MB = 1e6 bytes), latency of a pull, a push and a round
//    (p50 / p99 / max over every round of every client);
//  - the resident size (VmRSS) of this process and of the ps process before
//    the soak (ps initialized, no clients yet), when half of all rounds are
//    done, after it (clients gone) and at its peak (20 ms samples): growth
//    from halfway to the end, past warm-up, hints at a leak.
// Every push adds exactly 1 to the counter (SGD, lr 1, gradient -1), so at
// the end counter == global step == clients * rounds unless an update was
// lost. A client whose request fails reports the error and stops (its
// missing pushes count as lost). The last line of the output is
// "lost_updates: N", N = clients * rounds - counter. Exits 1 when N != 0,
// the global step is off or a request failed; the ps log is kept then.
#include <fcntl.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bench/bench_main.h"
#include "bench/bench_stats.h"
#include "bench/bench_timing.h"
#include "bench/check_ok.h"
#include "bench/in_process_ps.h"
#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/tensor.h"
#include "ps/ps_client.h"
#include "ps/shard_admin.h"
#include "transport/zmq_transport.h"

DEFINE_int32(clients, 16, "Concurrent clients (threads), each with its own PsClient");
DEFINE_int32(rounds, 2000, "Pull+push rounds per client");
DEFINE_int64(big_bytes, 256 * 1024,
             "Size of the large variable pulled and pushed every round "
             "(a positive multiple of 4)");
DEFINE_string(ps_mode, "process",
              "process: a real ps executable; inprocess: RpcServer + "
              "PsService in this process");
DEFINE_string(ps_binary, "",
              "The ps executable for --ps_mode=process (default: 'ps' beside "
              "this program)");
DEFINE_int32(ps_threads, 2, "Handler threads of the ps (the ps default)");
DEFINE_int32(rpc_timeout_ms, 60000, "Deadline of each client request");

namespace pst {
namespace {

constexpr uint64_t kClusterId = 31337;
constexpr int kCounter = 1, kBig = 2;  // indexes into the placement's variables

// VmRSS of /proc/<pid>/status in KiB ("self" for this process); -1 if gone.
int64_t ResidentKiB(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 6, "VmRSS:") == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// A TCP port nothing listens on right now (the OS picks it).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  PCHECK(fd >= 0) << "socket";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  PCHECK(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) << "bind";
  socklen_t len = sizeof addr;
  PCHECK(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string ProgramDir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  PCHECK(n > 0) << "readlink /proc/self/exe";
  std::string s(path, n);
  return s.substr(0, s.rfind('/'));
}

// The ps under test: a child process or an in-process server.
class SoakPs {
 public:
  virtual ~SoakPs() = default;
  virtual ClusterSpec Cluster() const = 0;
  // "" when the ps is this process.
  virtual std::string Pid() const = 0;
  virtual std::string Describe() const = 0;
  // Called after the clients have shut the ps down (process) or at the end;
  // a ps log is kept when `keep_log`.
  virtual void Finish(bool keep_log) = 0;
};

// A real ps executable. Started before any thread exists (fork), dies with
// this process (PR_SET_PDEATHSIG), logs to a file.
class ChildPs : public SoakPs {
 public:
  ChildPs(const std::string& binary, int threads) {
    CHECK(access(binary.c_str(), X_OK) == 0)
        << binary << " is not an executable: build the 'ps' target, or pass "
        << "--ps_binary=PATH or --ps_mode=inprocess";
    port_ = FreePort();
    const int worker_port = FreePort(), chief_port = FreePort();
    log_ = "/tmp/bench_soak_ps_" + std::to_string(getpid()) + ".log";
    std::vector<std::string> args = {
        binary,
        "--ps_hosts=127.0.0.1:" + std::to_string(port_),
        "--worker_hosts=127.0.0.1:" + std::to_string(worker_port),
        "--chief_host=127.0.0.1:" + std::to_string(chief_port),
        "--task_index=0",
        "--ps_threads=" + std::to_string(threads),
        "--cluster_id=" + std::to_string(kClusterId),
    };
    describe_ = "ps process (" + binary + ", " + std::to_string(threads) +
                " handler threads, log " + log_ + ", kept if the soak fails)";
    pid_ = fork();
    PCHECK(pid_ >= 0) << "fork";
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~ChildPs() override { Finish(/*keep_log=*/true); }

  ClusterSpec Cluster() const override {
    ClusterSpec cluster;
    cluster.ps.push_back({"127.0.0.1", port_});
    return cluster;
  }
  std::string Pid() const override { return std::to_string(pid_); }
  std::string Describe() const override { return describe_; }

  // Waits up to 10 s for the ps to exit (after a shutdown request), then
  // kills it. Removes the log unless `keep_log` or the ps failed.
  void Finish(bool keep_log) override {
    if (pid_ <= 0) return;
    int status = 0;
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          std::fprintf(stderr, "bench_soak: the ps ended with status %d; log %s\n", status,
                       log_.c_str());
        } else if (!keep_log) {
          unlink(log_.c_str());
        }
        pid_ = 0;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::fprintf(stderr, "bench_soak: the ps did not exit; killing pid %d\n", pid_);
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = 0;
  }

 private:
  int port_ = 0;
  pid_t pid_ = 0;
  std::string log_, describe_;
};

// The ps in this process, its own ZeroMQ context (bench/in_process_ps.h).
class InProcessSoakPs : public SoakPs {
 public:
  explicit InProcessSoakPs(int threads)
      : ps_(std::make_unique<InProcessPs>(threads, kClusterId)),
        describe_("in-process ps (RpcServer + PsService, " + std::to_string(threads) +
                  " handler threads)") {}

  ClusterSpec Cluster() const override { return ps_->Cluster(); }
  std::string Pid() const override { return ""; }
  std::string Describe() const override { return describe_; }
  void Finish(bool /*keep_log*/) override { ps_.reset(); }

 private:
  std::unique_ptr<InProcessPs> ps_;
  const std::string describe_;
};

ClientIdentity Identity(int index, wire::Role role = wire::Role::Worker) {
  ClientIdentity identity;
  identity.role = role;
  identity.index = index;
  identity.cluster_id = kClusterId;
  identity.rpc_timeout_ms = FLAGS_rpc_timeout_ms;
  return identity;
}

struct ClientResult {
  std::vector<double> pull_us, push_us, round_us;
  int64_t rounds_done = 0;
  Status status;
};

// Starts every client together: each waits here once connected.
class StartLine {
 public:
  explicit StartLine(int count) : waiting_(count) {}
  void Arrive() {
    MutexLock lock(mu_);
    if (--waiting_ == 0) {
      start_ = SteadyClock().Now();
      all_arrived_.NotifyAll();
    }
    while (waiting_ != 0) all_arrived_.Wait(mu_);
  }
  MonotonicClock::TimePoint start() {
    MutexLock lock(mu_);
    return start_;
  }

 private:
  Mutex mu_;
  CondVar all_arrived_;
  int waiting_ GUARDED_BY(mu_);
  MonotonicClock::TimePoint start_ GUARDED_BY(mu_);  // set by the last to arrive
};

// VmRSS of this process and of the ps (when a separate process): sampled
// every 20 ms during the soak for the peak, and once when half of all rounds
// are done (growth from halfway to the end, after warm-up, hints at a leak).
class MemoryMonitor {
 public:
  struct Sample {
    int64_t self_kib = -1, ps_kib = -1;
  };

  MemoryMonitor(std::string ps_pid, const std::atomic<int64_t>* rounds_all, int64_t halfway)
      : ps_pid_(std::move(ps_pid)), rounds_all_(rounds_all), halfway_(halfway) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~MemoryMonitor() { Stop(); }

  Sample Now() const {
    Sample s;
    s.self_kib = ResidentKiB("self");
    if (!ps_pid_.empty()) s.ps_kib = ResidentKiB(ps_pid_);
    return s;
  }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // After Stop().
  const Sample& halfway() const { return halfway_sample_; }
  const Sample& peak() const { return peak_; }

 private:
  void Loop() {
    while (!stop_.load()) {
      const Sample s = Now();
      peak_.self_kib = std::max(peak_.self_kib, s.self_kib);
      peak_.ps_kib = std::max(peak_.ps_kib, s.ps_kib);
      if (halfway_sample_.self_kib < 0 && rounds_all_->load() >= halfway_) {
        halfway_sample_ = s;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  const std::string ps_pid_;
  const std::atomic<int64_t>* rounds_all_;
  const int64_t halfway_;
  std::atomic<bool> stop_{false};
  Sample halfway_sample_, peak_;  // written by thread_ only until joined
  std::thread thread_;
};

void RunClient(int index, const ClusterSpec& cluster, const Placement& placement,
               StartLine* start_line, std::atomic<int64_t>* rounds_all, ClientResult* result) {
  zmq::context_t context(1);
  ZmqTransport transport(context);
  PsClient client(transport, cluster, placement, Identity(index));
  const int64_t big_elements = placement.variables()[kBig].shape[0];
  std::vector<Tensor> grads = {Tensor(DType::kFloat32, {1}),
                               Tensor(DType::kFloat32, {big_elements})};
  grads[0].f32()[0] = -1.0f;  // SGD, lr 1: +1 per push
  std::fill(grads[1].f32(), grads[1].f32() + big_elements, 1e-6f);
  std::vector<Tensor> values;
  result->pull_us.reserve(FLAGS_rounds);
  result->push_us.reserve(FLAGS_rounds);
  result->round_us.reserve(FLAGS_rounds);
  start_line->Arrive();
  for (int r = 0; r < FLAGS_rounds; ++r) {
    const auto t0 = SteadyClock().Now();
    Status pulled = client.Pull({kCounter, kBig}, &values);
    if (!pulled.ok()) {
      result->status = pulled;
      return;
    }
    const auto t1 = SteadyClock().Now();
    StatusOr<PushSummary> pushed =
        client.Push({kCounter, kBig}, grads, /*increment_global_step=*/true);
    if (!pushed.ok()) {
      result->status = pushed.status();
      return;
    }
    const auto t2 = SteadyClock().Now();
    result->pull_us.push_back(Micros(t1 - t0));
    result->push_us.push_back(Micros(t2 - t1));
    result->round_us.push_back(Micros(t2 - t0));
    ++result->rounds_done;
    rounds_all->fetch_add(1, std::memory_order_relaxed);
  }
}

std::string Kib(int64_t kib) {
  if (kib < 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", kib / 1024.0);
  return buf;
}

std::string DeltaKib(int64_t before, int64_t after) {
  if (before < 0 || after < 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f MiB", (after - before) / 1024.0);
  return buf;
}

int Main(std::unique_ptr<SoakPs> ps) {
  const auto program_start = SteadyClock().Now();
  const int clients = FLAGS_clients;
  const int64_t rounds = FLAGS_rounds;
  const int64_t big_elements = FLAGS_big_bytes / 4;
  const int64_t expected = clients * rounds;
  const double round_bytes = 2.0 * (4 + 4 * big_elements);  // pulled + pushed

  std::printf("bench_soak: %d clients x %lld rounds against one ps\n", clients,
              static_cast<long long>(rounds));
  std::printf("measures (127.0.0.1 TCP, one request in flight per client):\n");
  std::printf("  ps: %s\n", ps->Describe().c_str());
  std::printf(
      "  variables: global_step (int64), counter (float32 [1]), big (float32 "
      "[%lld], %lld B);\n",
      static_cast<long long>(big_elements), static_cast<long long>(4 * big_elements));
  std::printf("  async, SGD lr 1, staleness policy apply\n");
  std::printf("  round = Pull(counter, big) + Push(-1 for counter, 1e-6 for big,\n");
  std::printf("  increment global step); every client (thread) has its own\n");
  std::printf("  ZeroMQ context and PsClient; all start together\n");
  std::printf(
      "  MB = 1e6 bytes of tensor payload (pulled + pushed); latency in "
      "us\n\n");
  std::fflush(stdout);

  // Initialize the ps (the bench acts as the chief: role Chief, from the
  // chief host 127.0.0.1 the ps is given).
  StatusOr<Placement> computed = Placement::Compute(
      WithGlobalStep({{"counter", DType::kFloat32, {1}, Initializer::kZeros},
                      {"big", DType::kFloat32, {big_elements}, Initializer::kZeros}}),
      PlacementOptions());
  CheckOk(computed.status(), "placement");
  const Placement placement = std::move(computed).value();
  const ClusterSpec cluster = ps->Cluster();
  {
    zmq::context_t context(1);
    ZmqTransport transport(context);
    PsClient chief(transport, cluster, placement, Identity(0, wire::Role::Chief));
    CheckOk(ShardAdmin(&chief)
                .GetShardStatus(0, SteadyClock().Now() + std::chrono::seconds(30))
                .status(),
            "waiting for the ps");
    ShardConfig config;
    config.optimizer.name = "sgd";
    config.optimizer.learning_rate = 1.0f;
    config.global_step_variable = kGlobalStepName;
    CheckOk(ShardAdmin(&chief).Initialize(config,
                                          {Tensor(DType::kInt64, {}), Tensor(DType::kFloat32, {1}),
                                           Tensor(DType::kFloat32, {big_elements})}),
            "initializing the ps");
  }
  const std::string ps_pid = ps->Pid();  // "" for an in-process ps
  std::atomic<int64_t> rounds_all{0};
  MemoryMonitor memory(ps_pid, &rounds_all, expected / 2);
  const MemoryMonitor::Sample before = memory.Now();

  std::vector<ClientResult> results(clients);
  StartLine start_line(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back(RunClient, c, std::cref(cluster), std::cref(placement), &start_line,
                         &rounds_all, &results[c]);
  }
  for (std::thread& t : threads) t.join();
  const double soak_s = Seconds(SteadyClock().Now() - start_line.start());
  memory.Stop();

  // Check, read the counters, then shut the ps down.
  int failed = 0;
  int64_t rounds_done = 0;
  std::vector<double> pull_us, push_us, round_us;
  for (int c = 0; c < clients; ++c) {
    const ClientResult& r = results[c];
    rounds_done += r.rounds_done;
    pull_us.insert(pull_us.end(), r.pull_us.begin(), r.pull_us.end());
    push_us.insert(push_us.end(), r.push_us.begin(), r.push_us.end());
    round_us.insert(round_us.end(), r.round_us.begin(), r.round_us.end());
    if (!r.status.ok()) {
      ++failed;
      std::printf("client %d failed after %lld rounds: %s\n", c,
                  static_cast<long long>(r.rounds_done), r.status.ToString().c_str());
    }
  }
  results.clear();
  results.shrink_to_fit();
  double counter = -1;
  int64_t global_step = -1;
  MemoryMonitor::Sample after;
  {
    zmq::context_t context(1);
    ZmqTransport transport(context);
    // As the chief: only the chief may shut the ps down.
    PsClient reader(transport, cluster, placement, Identity(clients, wire::Role::Chief));
    std::vector<Tensor> values;
    CheckOk(reader.Pull({0, kCounter}, &values), "reading the counter");
    global_step = values[0].i64()[0];
    counter = values[1].f32()[0];
    values.clear();
    after.ps_kib = memory.Now().ps_kib;  // clients gone, the ps still up
    if (!ps_pid.empty()) {
      CheckOk(ShardAdmin(&reader).Shutdown(0, SteadyClock().Now() + std::chrono::seconds(30)),
              "shutting the ps down");
    }
  }
  const int64_t lost = expected - static_cast<int64_t>(std::llround(counter));
  const bool passed = lost == 0 && global_step == expected && failed == 0;
  ps->Finish(/*keep_log=*/!passed);
  after.self_kib = memory.Now().self_kib;

  std::sort(pull_us.begin(), pull_us.end());
  std::sort(push_us.begin(), push_us.end());
  std::sort(round_us.begin(), round_us.end());
  std::printf("== soak: %d clients, %lld rounds each, big = %lld B ==\n", clients,
              static_cast<long long>(rounds), static_cast<long long>(4 * big_elements));
  std::printf("%-10s | %10s | %10s | %12s | %12s\n", "rounds", "seconds", "rounds/s",
              "payload MB/s", "per client/s");
  std::printf("%-10lld | %10.2f | %10.0f | %12.0f | %12.1f\n", static_cast<long long>(rounds_done),
              soak_s, rounds_done / soak_s, rounds_done * round_bytes / soak_s / 1e6,
              rounds_done / soak_s / clients);
  std::printf("\nlatency in us over all %zu rounds:\n", round_us.size());
  std::printf("%-6s | %10s | %10s | %10s\n", "", "p50", "p99", "max");
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("%-6s | %10.0f | %10.0f | %10.0f\n", name, Percentile(v, 0.5), Percentile(v, 0.99),
                v.empty() ? 0.0 : v.back());
  };
  row("pull", pull_us);
  row("push", push_us);
  row("round", round_us);
  std::printf(
      "\nresident size (VmRSS): before = ps initialized, no clients; halfway ="
      "\n  half of all rounds done; after = clients gone (ps: before its"
      "\n  shutdown); peak = largest 20 ms sample during the soak\n");
  std::printf("%-14s | %10s | %10s | %10s | %10s | %10s\n", "process", "before", "halfway", "after",
              "peak", "growth");
  auto memory_row = [](const std::string& name, int64_t b, int64_t h, int64_t a, int64_t p) {
    std::printf("%-14s | %10s | %10s | %10s | %10s | %10s\n", name.c_str(), Kib(b).c_str(),
                Kib(h).c_str(), Kib(a).c_str(), Kib(p).c_str(), DeltaKib(b, a).c_str());
  };
  const MemoryMonitor::Sample& half = memory.halfway();
  const MemoryMonitor::Sample& peak = memory.peak();
  memory_row("bench_soak", before.self_kib, half.self_kib, after.self_kib, peak.self_kib);
  if (!ps_pid.empty()) {
    memory_row("ps (pid " + ps_pid + ")", before.ps_kib, half.ps_kib, after.ps_kib, peak.ps_kib);
  } else {
    std::printf("(the ps runs inside bench_soak)\n");
  }

  std::printf(
      "\ncounter: %.0f, global_step: %lld, expected: %lld, failed clients: "
      "%d\n",
      counter, static_cast<long long>(global_step), static_cast<long long>(expected), failed);
  std::printf("took %.1f s\n", Seconds(SteadyClock().Now() - program_start));
  std::printf("lost_updates: %lld\n", static_cast<long long>(lost));
  return passed ? 0 : 1;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  FLAGS_minloglevel = 1;  // the in-process ps logs its init at INFO
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_soak [--clients=16] [--rounds=2000] [--big_bytes=262144] "
                           "[--ps_mode=process|inprocess]: concurrent clients against one ps; "
                           "the last line is lost_updates: N",
                           "bench/bench_soak.cc")) {
    return 0;
  }
  CHECK_GT(FLAGS_clients, 0) << "--clients";
  CHECK_GT(FLAGS_rounds, 0) << "--rounds";
  CHECK(FLAGS_big_bytes > 0 && FLAGS_big_bytes % 4 == 0)
      << "--big_bytes must be a positive multiple of 4";
  // Every float32 sum up to clients * rounds is exact below 2^24.
  CHECK_LE(int64_t{FLAGS_clients} * FLAGS_rounds, int64_t{1} << 24)
      << "--clients * --rounds must stay below 2^24 (the counter is float32)";
  std::unique_ptr<pst::SoakPs> ps;
  if (FLAGS_ps_mode == "process") {
    // Before any thread exists: fork.
    ps = std::make_unique<pst::ChildPs>(
        FLAGS_ps_binary.empty() ? pst::ProgramDir() + "/ps" : FLAGS_ps_binary, FLAGS_ps_threads);
  } else if (FLAGS_ps_mode == "inprocess") {
    ps = std::make_unique<pst::InProcessSoakPs>(FLAGS_ps_threads);
  } else {
    LOG(FATAL) << "--ps_mode=" << FLAGS_ps_mode << " is not one of: process, inprocess";
  }
  return pst::Main(std::move(ps));
}
