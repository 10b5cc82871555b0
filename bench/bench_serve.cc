// bench_serve: the serve executable under load, on 127.0.0.1.
//
// Measures, for each run:
//  - a `serve` process (the executable beside this one) serving a click
//    model: --model_file, or by default a wide_deep model on Criteo's 39
//    fields with tables of --embedding_rows rows and random parameters,
//    written to a temporary folder;
//  - C connections (keep-alive) driven by one client thread over epoll,
//    closed loop: each sends POST /predict with L criteo lines, waits for
//    the whole answer, and sends the next (64 different bodies in turn);
//  - requests/s and lines/s over --seconds after 0.5 s of warm-up, and the
//    latency of a request, send to whole answer: p50, p99, max;
//  - answers other than 200, and connections the server closed: errors.
// The runs: every C of --clients with every L of --lines, then
// --many_connections connections at once with 1 line each. The client and
// the server share the machine's cores. Exits 1 when a request fails.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_main.h"
#include "bench/bench_stats.h"
#include "bench/bench_timing.h"
#include "bench/check_ok.h"
#include "common/clock.h"
#include "common/split.h"
#include "data/criteo_reader.h"
#include "job/job.h"
#include "job/model_file.h"

DEFINE_string(serve_binary, "", "The serve executable (default: 'serve' beside this program)");
DEFINE_string(model_file, "",
              "The model.bin to serve (default: a wide_deep click model on 39 criteo fields, "
              "written to a temporary folder)");
DEFINE_int64(embedding_rows, 100000, "The default model's table rows");
DEFINE_int32(server_threads, 0, "serve's --threads (0: its default, one per CPU)");
DEFINE_double(seconds, 5, "Measured time of each run, after 0.5 s of warm-up");
DEFINE_string(clients, "1,64", "Concurrent connections of the runs (a comma-separated list)");
DEFINE_string(lines, "1,100", "Criteo lines per request of the runs (a comma-separated list)");
DEFINE_int32(many_connections, 1000,
             "A last run with this many connections at once, 1 line a request (0: none)");

namespace pst {
namespace {

// A criteo line with random values: integers as counts, categoricals as
// 8-hex-digit hashes, some of each empty.
std::string RandomCriteoLine(std::mt19937& random) {
  std::string line = std::to_string(random() % 2);
  for (int j = 0; j < kCriteoIntegerFeatures; ++j) {
    line += "\t";
    if (random() % 8 != 0) line += std::to_string(random() % (j < 5 ? 20 : 2000));
  }
  char hash[16];
  for (int f = 0; f < kCriteoCategoricalFields; ++f) {
    line += "\t";
    if (random() % 10 == 0) continue;
    std::snprintf(hash, sizeof hash, "%08x", static_cast<unsigned>(random() % (1000 + 50 * f)));
    line += hash;
  }
  return line;
}

// Writes a wide_deep model of random parameters in `dir`: its path.
std::string WriteModel(const std::string& dir) {
  std::mt19937 random(7);
  {
    std::ofstream train(dir + "/train.txt");
    for (int i = 0; i < 100; ++i) train << RandomCriteoLine(random) << "\n";
  }
  JobOptions options;
  options.data.format = "criteo";
  options.data.train_file = dir + "/train.txt";
  options.model = "wide_deep";
  options.embedding_rows = FLAGS_embedding_rows;
  StatusOr<Job> job = LoadJob(options, /*with_test=*/false);
  CheckOk(job.status(), "the model's job");
  StatusOr<std::unique_ptr<Model>> model = MakeJobModel(*job);
  CheckOk(model.status(), "the model");
  std::uniform_real_distribution<float> uniform(-0.05f, 0.05f);
  std::vector<Tensor> params;
  for (const VariableSpec& v : (*model)->variables()) params.emplace_back(v.dtype, v.shape);
  for (const EmbeddingTableSpec& t : (*model)->tables()) {
    params.emplace_back(DType::kFloat32, Shape{t.rows, t.dim});
  }
  for (Tensor& p : params) {
    for (int64_t i = 0; i < p.num_elements(); ++i) p.f32()[i] = uniform(random);
  }
  const std::string path = dir + "/model.bin";
  CheckOk(WriteModelFile(path, *job, **model, params), "writing the model");
  return path;
}

// A serve process on a port the OS picks; killed (SIGTERM) at destruction.
class ServeProcess {
 public:
  ServeProcess(const std::string& binary, const std::string& model_file, const std::string& log)
      : log_(log) {
    CHECK(access(binary.c_str(), X_OK) == 0)
        << binary << " is not an executable: build the 'serve' target or pass --serve_binary";
    std::vector<std::string> args = {binary, "--model_file=" + model_file, "--port=0"};
    if (FLAGS_server_threads > 0)
      args.push_back("--threads=" + std::to_string(FLAGS_server_threads));
    pid_ = fork();
    PCHECK(pid_ >= 0) << "fork";
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, STDERR_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~ServeProcess() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

  // The port from serve's log line "serve: listening on HOST:PORT" (30 s at most).
  int AwaitPort() const {
    const std::regex listening("serve: listening on \\S+:(\\d+)");
    for (int i = 0; i < 3000; ++i) {
      std::ifstream in(log_);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      std::smatch match;
      if (std::regex_search(text, match, listening)) return std::stoi(match[1]);
      CHECK(waitpid(pid_, nullptr, WNOHANG) == 0) << "serve exited; its log:\n" << text;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    LOG(FATAL) << "serve did not listen within 30 s; its log: " << log_;
  }

 private:
  std::string log_;
  pid_t pid_ = 0;
};

// One connection's request in flight.
struct Connection {
  int fd = -1;
  size_t body = 0;  // which of the bodies it sends next
  size_t sent = 0;
  std::string in;
  MonotonicClock::TimePoint started;
};

struct RunResult {
  int64_t requests = 0, errors = 0;
  double seconds = 0;
  std::vector<double> latencies_ms;  // sorted
};

// Watches `fd` for `events` (EPOLLIN or EPOLLOUT) as connection `index`.
void Watch(int epoll, int op, int fd, uint32_t events, uint32_t index) {
  epoll_event event{};
  event.events = events;
  event.data.u32 = index;
  PCHECK(epoll_ctl(epoll, op, fd, &event) == 0) << "epoll_ctl";
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  PCHECK(fd >= 0) << "socket";
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  PCHECK(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) << "connect";
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// The status of the answer at the start of `in` once it is whole, with its
// length in *size; 0 while it is not.
int WholeAnswer(const std::string& in, size_t* size) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return 0;
  const size_t at = in.find("Content-Length: ");
  const size_t length = at < head_end ? std::stoul(in.substr(at + 16)) : 0;
  if (in.size() < head_end + 4 + length) return 0;
  *size = head_end + 4 + length;
  return std::stoi(in.substr(9, 3));
}

// `connections` closed-loop clients on `port` for 0.5 s of warm-up and
// FLAGS_seconds measured, sending `requests` in turn.
RunResult Run(int port, int connections, const std::vector<std::string>& requests) {
  const int epoll = epoll_create1(0);
  std::vector<Connection> conns(connections);
  const MonotonicClock& clock = SteadyClock();
  for (int i = 0; i < connections; ++i) {
    conns[i].fd = Connect(port);
    conns[i].body = i % requests.size();
    conns[i].started = clock.Now();
    Watch(epoll, EPOLL_CTL_ADD, conns[i].fd, EPOLLOUT, i);
  }
  const auto measure_from = clock.Now() + std::chrono::milliseconds(500);
  const auto end = measure_from + std::chrono::duration_cast<MonotonicClock::Duration>(
                                      std::chrono::duration<double>(FLAGS_seconds));
  RunResult result;
  std::vector<epoll_event> events(1024);
  char buffer[1 << 16];
  while (clock.Now() < end) {
    const int n = epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 100);
    for (int e = 0; e < n; ++e) {
      const uint32_t index = events[e].data.u32;
      Connection& c = conns[index];
      const std::string& request = requests[c.body];
      if (events[e].events & EPOLLOUT) {
        const ssize_t sent =
            send(c.fd, request.data() + c.sent, request.size() - c.sent, MSG_NOSIGNAL);
        if (sent > 0) c.sent += sent;
        if (c.sent == request.size()) {
          Watch(epoll, EPOLL_CTL_MOD, c.fd, EPOLLIN, index);
        }
        continue;
      }
      const ssize_t got = recv(c.fd, buffer, sizeof buffer, 0);
      if (got <= 0) {  // closed by the server: an error, and a new connection
        ++result.errors;
        close(c.fd);
        c = Connection{Connect(port), c.body, 0, "", clock.Now()};
        Watch(epoll, EPOLL_CTL_ADD, c.fd, EPOLLOUT, index);
        continue;
      }
      c.in.append(buffer, got);
      size_t size = 0;
      const int status = WholeAnswer(c.in, &size);
      if (status == 0) continue;
      const auto now = clock.Now();
      if (c.started >= measure_from) {
        ++result.requests;
        if (status != 200) ++result.errors;
        result.latencies_ms.push_back(Micros(now - c.started) / 1000);
      }
      c.in.erase(0, size);
      c.body = (c.body + 1) % requests.size();
      c.sent = 0;
      c.started = now;
      Watch(epoll, EPOLL_CTL_MOD, c.fd, EPOLLOUT, index);
    }
  }
  result.seconds = Seconds(clock.Now() - measure_from);
  for (Connection& c : conns) close(c.fd);
  close(epoll);
  std::sort(result.latencies_ms.begin(), result.latencies_ms.end());
  return result;
}

// 64 different POST /predict requests of `lines` random criteo lines each.
std::vector<std::string> Requests(int lines) {
  std::mt19937 random(lines);
  std::vector<std::string> requests;
  for (int r = 0; r < 64; ++r) {
    std::string body = "{\"format\":\"criteo\",\"lines\":[";
    for (int i = 0; i < lines; ++i) {
      std::string line = RandomCriteoLine(random);
      size_t tab = 0;
      while ((tab = line.find('\t', tab)) != std::string::npos) line.replace(tab, 1, "\\t");
      body += (i ? ",\"" : "\"") + line + "\"";
    }
    body += "]}";
    requests.push_back(
        "POST /predict HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body);
  }
  return requests;
}

void PrintRow(int connections, int lines, const RunResult& r) {
  std::printf("%11d  %5d  %10.1f  %10.1f  %8.3f  %8.3f  %8.3f  %6lld\n", connections, lines,
              r.requests / r.seconds, r.requests * lines / r.seconds,
              Percentile(r.latencies_ms, 0.5), Percentile(r.latencies_ms, 0.99),
              r.latencies_ms.empty() ? 0.0 : r.latencies_ms.back(),
              static_cast<long long>(r.errors));
  std::fflush(stdout);
}

int Main(const char* argv0) {
  // A connection is a file descriptor: the soft limit (often 1024) up to the hard one.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  const std::string dir = "/tmp/bench_serve_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string model = FLAGS_model_file.empty() ? WriteModel(dir) : FLAGS_model_file;
  const std::string binary = FLAGS_serve_binary.empty()
                                 ? (std::filesystem::path(argv0).parent_path() / "serve").string()
                                 : FLAGS_serve_binary;
  int64_t errors = 0;
  {
    ServeProcess serve(binary, model, dir + "/serve.log");
    const int port = serve.AwaitPort();
    std::printf("serve %s on 127.0.0.1:%d; %u cores; %.1f s a run\n", model.c_str(), port,
                std::thread::hardware_concurrency(), FLAGS_seconds);
    std::printf(
        "connections  lines  requests/s     lines/s    p50 ms    p99 ms    max ms  errors\n");
    for (const std::string& lines : SplitCommas(FLAGS_lines)) {
      const std::vector<std::string> requests = Requests(std::stoi(lines));
      for (const std::string& clients : SplitCommas(FLAGS_clients)) {
        const RunResult r = Run(port, std::stoi(clients), requests);
        PrintRow(std::stoi(clients), std::stoi(lines), r);
        errors += r.errors;
      }
    }
    if (FLAGS_many_connections > 0) {
      const RunResult r = Run(port, FLAGS_many_connections, Requests(1));
      PrintRow(FLAGS_many_connections, 1, r);
      errors += r.errors;
    }
  }
  std::filesystem::remove_all(dir);
  std::printf("errors: %lld\n", static_cast<long long>(errors));
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_serve [--clients=1,64] [--lines=1,100] [--seconds=5] "
                           "[--many_connections=1000]: requests/s and latency of the serve "
                           "executable; exits 1 when a request fails",
                           "bench/bench_serve.cc")) {
    return 0;
  }
  return pst::Main(argv[0]);
}
