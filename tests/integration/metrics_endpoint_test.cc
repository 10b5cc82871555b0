// The Prometheus endpoints (--metrics_port) of a real chief and ps, scraped
// over HTTP while the cluster trains. The text is checked by a regex here
// and, when PST_TEST_PYTHON names a Python with prometheus_client, by the
// official parser.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string headers;
  std::string body;
};

// GET http://127.0.0.1:port/path, reading until the server closes.
HttpReply HttpGet(int port, const std::string& path) {
  HttpReply reply;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string all;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    const auto deadline = SteadyClock().Now() + seconds(5);
    char buffer[4096];
    while (SteadyClock().Now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      all.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t blank = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || blank == std::string::npos) return reply;
  reply.status = std::atoi(all.c_str() + 9);
  reply.headers = all.substr(0, blank);
  reply.body = all.substr(blank + 4);
  return reply;
}

// Lines that are neither a HELP/TYPE comment nor "name{labels} value".
std::vector<std::string> MalformedLines(const std::string& text) {
  static const std::regex kLine(
      R"((# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)|(# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (gauge|counter))|)"
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? )"
      R"(([-+]?[0-9.eE+-]+|NaN|[+-]Inf)))");
  std::vector<std::string> bad;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!std::regex_match(line, kLine)) bad.push_back(line);
  }
  if (text.empty() || text.back() != '\n') bad.push_back("(no final newline)");
  return bad;
}

// The value of the sample written exactly as `sample` ("name" or
// "name{shard=\"0\"}"), or nullopt.
std::optional<double> Sample(const std::string& text, const std::string& sample) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
  }
  return std::nullopt;
}

// Runs the official parser on `path` with $PST_TEST_PYTHON: "sample value"
// per line, e.g. "pstrain_live_workers 2". Sets *why and returns nullopt
// when that Python or its prometheus_client is missing.
constexpr char kParser[] = R"(import sys
try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as e:
    print("SKIP: %s" % e)
    sys.exit(3)
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    assert family.documentation, family.name
    for s in family.samples:
        labels = ",".join('%s="%s"' % kv for kv in sorted(s.labels.items()))
        print("%s%s %r" % (s.name, "{%s}" % labels if labels else "", s.value))
)";

std::optional<std::map<std::string, double>> ParseWithPython(const std::string& dir,
                                                             const std::string& text,
                                                             std::string* why) {
  const char* python = std::getenv("PST_TEST_PYTHON");
  if (python == nullptr || *python == '\0') {
    *why = "PST_TEST_PYTHON is not set";
    return std::nullopt;
  }
  const std::string script = dir + "/parse.py", page = dir + "/page.txt";
  std::ofstream(script) << kParser;
  std::ofstream(page) << text;
  const std::string command = "'" + std::string(python) + "' '" + script + "' '" + page + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *why = "cannot run " + command;
    return std::nullopt;
  }
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 3 || code == 127) {
    *why = std::string(python) + ": " + out;
    return std::nullopt;
  }
  EXPECT_EQ(code, 0) << "the parser refused the page:\n" << out << "\npage:\n" << text;
  std::map<std::string, double> samples;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    if (space != std::string::npos)
      samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

class MetricsEndpointTest : public SyntheticDataTest {};

TEST_F(MetricsEndpointTest, ChiefAndPsServeParsableMetricsWhileTraining) {
  constexpr int kWorkers = 2;
  LocalCluster cluster(1, kWorkers, MakeTestDir("metrics-endpoint"));
  // Two more free ports, none of the cluster's.
  std::vector<int> metrics_ports;
  for (int port : FreePorts(2 + static_cast<int>(cluster.ports().size()))) {
    const auto& used = cluster.ports();
    if (std::find(used.begin(), used.end(), port) == used.end()) metrics_ports.push_back(port);
  }
  const int chief_port = metrics_ports.at(0), ps_port = metrics_ports.at(1);
  const std::vector<std::string> flags = {"--data_dir=" + data_dir(),
                                          "--model=mlp",
                                          "--batch_size=50",
                                          "--learning_rate=0.5",
                                          "--train_steps=2500",
                                          "--eval_every_steps=200",
                                          "--log_every_steps=100",
                                          "--simulated_delay_ms=5",
                                          "--checkpoint_dir=" + cluster.dir() + "/checkpoints",
                                          "--checkpoint_every_steps=200",
                                          "--checkpoint_every_secs=0"};
  auto with = [&flags](const std::string& flag) {
    std::vector<std::string> f = flags;
    f.push_back(flag);
    return f;
  };
  cluster.StartTask("ps", 0, with("--metrics_port=" + std::to_string(ps_port)));
  cluster.StartTask("chief", 0, with("--metrics_port=" + std::to_string(chief_port)));
  for (int i = 0; i < kWorkers; ++i) cluster.StartTask("worker", i, flags);

  // Scrape until every worker trains, an evaluation and a checkpoint happened.
  HttpReply first;
  const auto deadline = SteadyClock().Now() + seconds(60);
  for (; SteadyClock().Now() < deadline; std::this_thread::sleep_for(milliseconds(100))) {
    first = HttpGet(chief_port, "/metrics");
    if (first.status == 200 && Sample(first.body, "pstrain_live_workers").value_or(0) == kWorkers &&
        Sample(first.body, "pstrain_global_step").value_or(0) > 0 &&
        Sample(first.body, "pstrain_test_accuracy") &&
        Sample(first.body, "pstrain_checkpoint_age_seconds")) {
      break;
    }
  }
  ASSERT_EQ(first.status, 200) << cluster.task("chief").Log();
  EXPECT_NE(first.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos)
      << first.headers;
  std::this_thread::sleep_for(milliseconds(500));
  const HttpReply second = HttpGet(chief_port, "/metrics");
  const HttpReply ps = HttpGet(ps_port, "/metrics");
  const HttpReply missing = HttpGet(chief_port, "/");
  ASSERT_EQ(second.status, 200);
  ASSERT_EQ(ps.status, 200);
  EXPECT_EQ(missing.status, 404);

  // Sane values, read with the regex-level checks.
  for (const HttpReply& r : {first, second, ps}) {
    EXPECT_EQ(MalformedLines(r.body), std::vector<std::string>()) << r.body;
  }
  const double step1 = Sample(first.body, "pstrain_global_step").value_or(-1);
  const double step2 = Sample(second.body, "pstrain_global_step").value_or(-1);
  EXPECT_GT(step1, 0) << first.body;
  EXPECT_GT(step2, step1) << "the global step did not grow between two scrapes:\n" << second.body;
  EXPECT_EQ(Sample(second.body, "pstrain_live_workers"), kWorkers) << second.body;
  EXPECT_EQ(Sample(second.body, "pstrain_live_ps"), 1) << second.body;
  EXPECT_GT(Sample(second.body, "pstrain_steps_per_second").value_or(0), 0) << second.body;
  EXPECT_GT(Sample(second.body, "pstrain_examples_per_second").value_or(0), 0) << second.body;
  const double accuracy = Sample(second.body, "pstrain_test_accuracy").value_or(-1);
  EXPECT_GE(accuracy, 0) << second.body;
  EXPECT_LE(accuracy, 1) << second.body;
  EXPECT_GE(Sample(second.body, "pstrain_checkpoint_age_seconds").value_or(-1), 0);
  EXPECT_EQ(Sample(second.body, "pstrain_checkpoint_consecutive_failures"), 0);
  EXPECT_GT(Sample(ps.body, "pstrain_ps_received_bytes_total{shard=\"0\"}").value_or(0), 0)
      << ps.body;
  EXPECT_GT(Sample(ps.body, "pstrain_ps_sent_bytes_total{shard=\"0\"}").value_or(0), 0);
  EXPECT_GT(Sample(ps.body, "pstrain_ps_updates_applied_total{shard=\"0\"}").value_or(0), 0);
  EXPECT_EQ(Sample(ps.body, "pstrain_ps_initialized{shard=\"0\"}"), 1);

  // The official parser, where there is one.
  std::string why;
  const auto chief_parsed = ParseWithPython(cluster.dir(), second.body, &why);
  const auto ps_parsed =
      chief_parsed ? ParseWithPython(cluster.dir(), ps.body, &why) : std::nullopt;

  const auto exits = cluster.WaitAll(seconds(180));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits);
  // The endpoints close with their tasks.
  EXPECT_TRUE(PortIsFree(chief_port));
  EXPECT_TRUE(PortIsFree(ps_port));

  if (!chief_parsed || !ps_parsed) {
    GTEST_SKIP() << "the HTTP and regex checks passed; the prometheus_client parse was "
                    "skipped: "
                 << why;
  }
  EXPECT_EQ(chief_parsed->at("pstrain_global_step"), step2);
  EXPECT_EQ(chief_parsed->at("pstrain_live_workers"), kWorkers);
  EXPECT_EQ(chief_parsed->count("pstrain_stale_gradients_dropped_total"), 1u);
  EXPECT_GT(ps_parsed->at("pstrain_ps_received_bytes_total{shard=\"0\"}"), 0);
}

}  // namespace
}  // namespace pst
