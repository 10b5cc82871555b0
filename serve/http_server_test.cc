// The server over real sockets on 127.0.0.1: a ModelServer in this process
// on a port the OS picks, spoken to as a client would.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "serve/model_server.h"
#include "serve/testing/click_models.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A connection to 127.0.0.1:port whose reads give up after 10 s.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  return fd;
}

void SendAll(int fd, const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server closed: the answer tells
    sent += n;
  }
}

struct Answer {
  int status = 0;  // 0: none (closed, or timed out)
  std::string head, body;
};

// One answer from `fd`: the status line and headers, then Content-Length
// bytes of body.
Answer Receive(int fd) {
  std::string data;
  char buffer[65536];
  size_t head_end = std::string::npos;
  Answer answer;
  while (true) {
    if (head_end == std::string::npos) head_end = data.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      answer.head = data.substr(0, head_end);
      const size_t length_at = answer.head.find("Content-Length: ");
      const size_t length =
          length_at == std::string::npos ? 0 : std::stoul(answer.head.substr(length_at + 16));
      if (data.size() >= head_end + 4 + length) {
        answer.status = std::stoi(answer.head.substr(9, 3));
        answer.body = data.substr(head_end + 4, length);
        return answer;
      }
    }
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return answer;
    data.append(buffer, n);
  }
}

std::string Request(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& headers = "Content-Type: application/json\r\n") {
  return method + " " + path + " HTTP/1.1\r\nHost: test\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One request on a connection of its own.
Answer Exchange(int port, const std::string& request) {
  const int fd = Connect(port);
  SendAll(fd, request);
  Answer answer = Receive(fd);
  close(fd);
  return answer;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("serve_http_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "exports");
    WriteLines(Path("train.txt"), CriteoLines(40));
    job_ = ClickJob(Path("train.txt"));
    options_.http.threads = 2;
    options_.http.max_request_bytes = 100000;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // A server of model.bin with ClickParams(job_, 0.5).
  std::unique_ptr<ModelServer> ServeModelBin() {
    const std::unique_ptr<Model> model = MakeJobModel(job_).value();
    EXPECT_TRUE(WriteModelFile(Path("model.bin"), job_, *model, ClickParams(job_, 0.5f)).ok());
    options_.model_file = Path("model.bin");
    StatusOr<std::unique_ptr<ModelServer>> server = ModelServer::Start(options_);
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    return server.ok() ? std::move(server).value() : nullptr;
  }

  static std::string PredictBody(int lines) {
    return Json{{"format", "criteo"}, {"lines", CriteoLines(lines)}}.dump();
  }

  fs::path dir_;
  Job job_;
  ServeOptions options_;
};

TEST_F(HttpServerTest, AnswersPredictionsOnAKeptAliveConnection) {
  std::unique_ptr<ModelServer> server = ServeModelBin();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  const int fd = Connect(server->port());
  for (int lines : {1, 3, 100}) {
    SendAll(fd, Request("POST", "/predict", PredictBody(lines)));
    const Answer answer = Receive(fd);
    ASSERT_EQ(answer.status, 200) << answer.head << answer.body;
    EXPECT_NE(answer.head.find("Content-Type: application/json"), std::string::npos);
    EXPECT_EQ(Json::parse(answer.body)["probabilities"].size(), static_cast<size_t>(lines));
  }
  close(fd);
  EXPECT_EQ(Exchange(server->port(), Request("GET", "/healthz", "")).status, 200);
  const Answer metrics = Exchange(server->port(), Request("GET", "/metrics", ""));
  EXPECT_NE(metrics.body.find("pstrain_serve_examples_total 104"), std::string::npos)
      << metrics.body;
}

TEST_F(HttpServerTest, BadRequestsAndGarbageGetAnswersAndTheServerGoesOn) {
  std::unique_ptr<ModelServer> server = ServeModelBin();
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  Answer malformed = Exchange(port, Request("POST", "/predict", "{\"format\": \"criteo\", "));
  EXPECT_EQ(malformed.status, 400);
  EXPECT_NE(malformed.body.find("not valid JSON"), std::string::npos) << malformed.body;
  EXPECT_EQ(
      Exchange(port, Request("POST", "/predict", PredictBody(1), "Content-Type: text/csv\r\n"))
          .status,
      415);
  EXPECT_EQ(Exchange(port, Request("DELETE", "/predict", "")).status, 405);
  EXPECT_EQ(Exchange(port, Request("GET", "/nowhere?x=1", "")).status, 404);
  // Over --max_request_bytes: answered from Content-Length, before the body.
  const Answer large = Exchange(port,
                                "POST /predict HTTP/1.1\r\nHost: t\r\nContent-Length: "
                                "100001\r\n\r\n");
  EXPECT_EQ(large.status, 413) << large.head;
  // ... and, chunked, once the body has gone by.
  const std::string chunk(60000, 'x');
  char size[16];
  std::snprintf(size, sizeof size, "%zx", chunk.size());
  const Answer chunked =
      Exchange(port, "POST /predict HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" +
                         std::string(size) + "\r\n" + chunk + "\r\n" + size + "\r\n" + chunk +
                         "\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.status, 413) << chunked.head;
  // Bytes that are no HTTP, and a connection dropped mid-request.
  std::string garbage(3000, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 37 + 11);
  const Answer refused = Exchange(port, garbage + "\r\n\r\n");
  EXPECT_TRUE(refused.status == 0 || refused.status == 400) << refused.head;
  const int dropped = Connect(port);
  SendAll(dropped, "POST /predict HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\n{\"form");
  close(dropped);
  // Still serving.
  EXPECT_EQ(Exchange(port, Request("POST", "/predict", PredictBody(2))).status, 200);
}

TEST_F(HttpServerTest, ManyConnectionsAtOnce) {
  std::unique_ptr<ModelServer> server = ServeModelBin();
  ASSERT_NE(server, nullptr);
  std::vector<int> fds;
  for (int i = 0; i < 300; ++i) fds.push_back(Connect(server->port()));
  const std::string request = Request("POST", "/predict", PredictBody(1));
  for (int fd : fds) SendAll(fd, request);
  int answered = 0;
  for (int fd : fds) {
    answered += Receive(fd).status == 200;
    close(fd);
  }
  EXPECT_EQ(answered, 300);
}

// --export_dir: 503 until the first export, then each export as it lands.
TEST_F(HttpServerTest, FollowsAnExportFolder) {
  options_.export_dir = Path("exports");
  options_.reload_every = std::chrono::milliseconds(20);
  StatusOr<std::unique_ptr<ModelServer>> server = ModelServer::Start(options_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  const Answer none = Exchange(port, Request("GET", "/healthz", ""));
  EXPECT_EQ(none.status, 503);
  EXPECT_NE(none.body.find("no export in"), std::string::npos) << none.body;

  // The step each answer names, polled until it is `step` (10 s at most).
  auto await_step = [&](int64_t step) {
    int64_t got = -1;
    for (int i = 0; i < 500 && got != step; ++i) {
      const Answer answer = Exchange(port, Request("POST", "/predict", PredictBody(2)));
      if (answer.status == 200) got = Json::parse(answer.body)["model_step"].get<int64_t>();
      if (got != step) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return got;
  };
  WriteExportBase(Path("exports"), 1000, job_, 0.1f);
  EXPECT_EQ(await_step(1000), 1000);
  WriteExportDelta(Path("exports"), 1100, 1000, 1000, job_, 0.2f);
  EXPECT_EQ(await_step(1100), 1100);
  const Answer metrics = Exchange(port, Request("GET", "/metrics", ""));
  EXPECT_NE(metrics.body.find("pstrain_serve_model_step 1100"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("pstrain_serve_model_base_step 1000"), std::string::npos);
  EXPECT_NE(metrics.body.find("pstrain_serve_model_loads_total 2"), std::string::npos);
}

TEST_F(HttpServerTest, APortTakenIsUnavailable) {
  std::unique_ptr<ModelServer> first = ServeModelBin();
  ASSERT_NE(first, nullptr);
  options_.http.port = first->port();
  const StatusOr<std::unique_ptr<ModelServer>> second = ModelServer::Start(options_);
  EXPECT_EQ(second.status().code(), Code::kUnavailable) << second.status().ToString();
}

}  // namespace
}  // namespace pst
