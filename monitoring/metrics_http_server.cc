#include "monitoring/metrics_http_server.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/thread_name.h"

namespace pst {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    default: return "Internal Server Error";
  }
}

std::string Response(int status, const std::string& content_type, const std::string& body,
                     bool with_body = true, const std::string& extra_headers = "") {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
  r += "Content-Type: " + content_type + "\r\n";
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  r += extra_headers;
  r += "Connection: close\r\n\r\n";
  if (with_body) r += body;
  return r;
}

std::string Error(int status, const std::string& why) {
  return Response(status, "text/plain; charset=utf-8", why + "\n", true,
                  status == 405 ? "Allow: GET, HEAD\r\n" : "");
}

// A token of the request line: printable, no spaces.
bool IsToken(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c <= ' ' || c >= 127) return false;
  }
  return true;
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

MetricsHttpServer::MetricsHttpServer(MetricsHttpServerOptions options,
                                     std::function<std::string()> page)
    : options_(std::move(options)), page_(std::move(page)) {}

MetricsHttpServer::~MetricsHttpServer() {
  Stop();
  if (thread_.joinable()) thread_.join();
  for (int fd : {listener_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

Status MetricsHttpServer::Start() {
  CHECK(!thread_.joinable()) << "started twice";
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  // "*": getaddrinfo's passive wildcard (every interface).
  const char* node = options_.host == "*" ? nullptr : options_.host.c_str();
  if (const int error = getaddrinfo(node, port.c_str(), &hints, &found); error != 0) {
    return Unavailable("metrics endpoint: cannot resolve '" + options_.host +
                       "': " + gai_strerror(error));
  }
  int last_error = 0;
  for (const addrinfo* a = found; a != nullptr && listener_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0) {
      listener_ = fd;
    } else {
      last_error = errno;
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listener_ < 0) {
    return Unavailable("metrics endpoint: cannot bind " + where + ": " + std::strerror(last_error));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  SetNonBlocking(listener_);
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Internal(std::string("metrics endpoint: pipe: ") + std::strerror(errno));
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::OK();
}

void MetricsHttpServer::Stop() {
  if (wake_[1] < 0) return;
  const char byte = 0;
  // The pipe stays readable from then on: every later wait sees it. A full
  // pipe (Stop called many times) is as good.
  (void)!write(wake_[1], &byte, 1);
}

bool MetricsHttpServer::WaitFor(int fd, short events, MonotonicClock::TimePoint deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock().Now())
            .count();
    if (left <= 0) return false;
    pollfd fds[2] = {{fd, events, 0}, {wake_[0], POLLIN, 0}};
    const int n = poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;
    if (fds[1].revents != 0) return false;  // stopping
    if (fds[0].revents != 0) return true;
  }
}

void MetricsHttpServer::Loop() {
  NameThisThread("metrics-http");
  for (;;) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "metrics endpoint: poll: " << std::strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (connection < 0) continue;  // gone before it was accepted, or out of descriptors
    Serve(connection);
    close(connection);
  }
}

bool MetricsHttpServer::ReadHead(int connection, std::string* head, int* status) {
  const auto deadline = SteadyClock().Now() + options_.read_timeout;
  char buffer[1024];
  for (;;) {
    if (head->find("\r\n\r\n") != std::string::npos || head->find("\n\n") != std::string::npos) {
      return true;
    }
    if (head->size() > options_.max_request_bytes) {
      *status = 431;
      return false;
    }
    if (!WaitFor(connection, POLLIN, deadline)) {
      *status = 408;
      return false;
    }
    // Never more than one byte past the limit.
    const size_t room = std::min(sizeof buffer, options_.max_request_bytes + 1 - head->size());
    const ssize_t n = recv(connection, buffer, room, 0);
    if (n == 0) {
      *status = 0;  // the client left: no one to answer
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      *status = 0;
      return false;
    }
    head->append(buffer, static_cast<size_t>(n));
  }
}

std::string MetricsHttpServer::Answer(const std::string& head) {
  // Request line: METHOD SP target SP HTTP/1.x
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const size_t first = line.find(' ');
  const size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
  if (second == std::string::npos || line.find(' ', second + 1) != std::string::npos) {
    return Error(400, "malformed request line");
  }
  const std::string method = line.substr(0, first);
  const std::string target = line.substr(first + 1, second - first - 1);
  const std::string version = line.substr(second + 1);
  if (!IsToken(method) || !IsToken(target) || target[0] != '/' ||
      version.rfind("HTTP/1.", 0) != 0) {
    return Error(400, "malformed request line");
  }
  if (method != "GET" && method != "HEAD") return Error(405, "read-only: GET /metrics");
  if (target.substr(0, target.find('?')) != "/metrics") return Error(404, "try /metrics");
  return Response(200, "text/plain; version=0.0.4; charset=utf-8", page_(), method == "GET");
}

void MetricsHttpServer::SendAll(int connection, const std::string& bytes) {
  const auto deadline = SteadyClock().Now() + options_.read_timeout;
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(connection, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!WaitFor(connection, POLLOUT, deadline)) return;  // a client that does not read
    } else {
      return;
    }
  }
}

void MetricsHttpServer::Serve(int connection) {
  std::string head;
  int status = 0;
  if (ReadHead(connection, &head, &status)) {
    SendAll(connection, Answer(head));
  } else if (status != 0) {
    SendAll(connection, Error(status, status == 431 ? "request too large" : "request timed out"));
  } else {
    return;
  }
  // Closing with unread bytes would reset the connection and could destroy
  // the answer before the client reads it: say we are done, then drain what
  // the client still sends, briefly and boundedly.
  shutdown(connection, SHUT_WR);
  const auto deadline = SteadyClock().Now() + std::chrono::milliseconds(200);
  char sink[4096];
  for (size_t drained = 0; drained < 65536 && WaitFor(connection, POLLIN, deadline);) {
    const ssize_t n = recv(connection, sink, sizeof sink, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (n > 0) drained += static_cast<size_t>(n);
  }
}

}  // namespace pst
