#include "monitoring/metrics_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "common/clock.h"

namespace pst {
namespace {

using std::chrono::milliseconds;

// A raw TCP client of 127.0.0.1:port.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawClient() { close(fd_); }
  bool connected() const { return connected_; }

  void Send(const std::string& bytes) {
    ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Everything until the server closes, or what came within `patience`.
  std::string ReadAll(milliseconds patience = milliseconds(5000)) {
    std::string all;
    const auto deadline = SteadyClock().Now() + patience;
    char buffer[4096];
    while (SteadyClock().Now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      all.append(buffer, static_cast<size_t>(n));
    }
    return all;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

class MetricsHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MetricsHttpServerOptions options;
    options.read_timeout = milliseconds(300);
    options.max_request_bytes = 1024;
    server_ = std::make_unique<MetricsHttpServer>(options, [this] {
      ++pages_;
      return std::string("pstrain_up 1\n");
    });
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
  }
  std::string Ask(const std::string& request) {
    RawClient client(server_->port());
    EXPECT_TRUE(client.connected());
    client.Send(request);
    return client.ReadAll();
  }

  std::atomic<int> pages_{0};
  std::unique_ptr<MetricsHttpServer> server_;
};

TEST_F(MetricsHttpServerTest, ServesTheMetricsPage) {
  const std::string reply = Ask("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Content-Length: 13\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
  EXPECT_EQ(reply.substr(reply.size() - 13), "pstrain_up 1\n") << reply;
  // A query string is ignored; HEAD gets the headers only.
  EXPECT_EQ(Ask("GET /metrics?x=1 HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  const std::string head = Ask("HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_EQ(head.find("pstrain_up"), std::string::npos) << head;
  EXPECT_EQ(pages_.load(), 3);
}

// "*" (transport/bind_address.h: a host name of no local address) binds
// every interface, loopback included.
TEST(MetricsHttpServerBindTest, StarBindsEveryInterface) {
  MetricsHttpServerOptions options;
  options.host = "*";
  MetricsHttpServer server(options, [] { return std::string("pstrain_up 1\n"); });
  ASSERT_TRUE(server.Start().ok());
  RawClient client(server.port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.ReadAll().rfind("HTTP/1.1 200 OK", 0), 0u);
}

TEST_F(MetricsHttpServerTest, AnswersOtherPathsAndMethodsWithErrors) {
  EXPECT_EQ(Ask("GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Ask("GET /metricsx HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  const std::string post = Ask("POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
  EXPECT_EQ(pages_.load(), 0);  // nothing but GET/HEAD /metrics builds the page
}

TEST_F(MetricsHttpServerTest, AnswersGarbageWith400) {
  for (const std::string garbage :
       {std::string("\x16\x03\x01\x02\x00\x01\x00\r\n\r\n", 11), std::string("hello\r\n\r\n"),
        std::string("GET /metrics\r\n\r\n"), std::string("GET  /metrics HTTP/1.1\r\n\r\n"),
        std::string("GET metrics HTTP/1.1\r\n\r\n"), std::string("GET /metrics SMTP/1\r\n\r\n")}) {
    const std::string reply = Ask(garbage);
    EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << garbage << " -> " << reply;
  }
}

TEST_F(MetricsHttpServerTest, RefusesAnOversizedRequestAndStaysUp) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.connected());
  // Headers past the 1 KiB limit, never ending.
  client.Send("GET /metrics HTTP/1.1\r\nX-Big: " + std::string(4000, 'a'));
  const std::string reply = client.ReadAll();
  EXPECT_EQ(reply.rfind("HTTP/1.1 431", 0), 0u) << reply;
  EXPECT_EQ(Ask("GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
}

TEST_F(MetricsHttpServerTest, DropsASilentClientAfterTheReadTimeout) {
  RawClient silent(server_->port());
  ASSERT_TRUE(silent.connected());
  const auto start = SteadyClock().Now();
  // The silent client gets a 408 after the 300 ms timeout, not never...
  const std::string reply = silent.ReadAll(milliseconds(5000));
  EXPECT_EQ(reply.rfind("HTTP/1.1 408", 0), 0u) << reply;
  EXPECT_LT(SteadyClock().Now() - start, milliseconds(3000));
  // ...and a client waiting behind it is served.
  EXPECT_EQ(Ask("GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
}

TEST_F(MetricsHttpServerTest, AClientThatLeavesEarlyDoesNotStopTheServer) {
  {
    RawClient gone(server_->port());
    gone.Send("GET /met");
  }
  EXPECT_EQ(Ask("GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
}

TEST(MetricsHttpServerStartTest, ReportsAPortInUse) {
  MetricsHttpServer first({}, [] { return std::string(); });
  ASSERT_TRUE(first.Start().ok());
  MetricsHttpServerOptions options;
  options.port = first.port();
  MetricsHttpServer second(options, [] { return std::string(); });
  const Status status = second.Start();
  EXPECT_EQ(status.code(), Code::kUnavailable);
  EXPECT_NE(status.message().find("cannot bind"), std::string::npos) << status.ToString();
}

TEST(MetricsHttpServerStartTest, StopsPromptlyWhileAClientIsSilent) {
  MetricsHttpServerOptions options;
  options.read_timeout = milliseconds(60000);
  auto server = std::make_unique<MetricsHttpServer>(options, [] { return std::string(); });
  ASSERT_TRUE(server->Start().ok());
  RawClient silent(server->port());
  ASSERT_TRUE(silent.connected());
  std::this_thread::sleep_for(milliseconds(100));  // being served
  const auto start = SteadyClock().Now();
  server.reset();
  EXPECT_LT(SteadyClock().Now() - start, milliseconds(2000));
}

}  // namespace
}  // namespace pst
