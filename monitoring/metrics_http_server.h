// MetricsHttpServer: a minimal, read-only HTTP/1.1 server for a Prometheus
// scrape. "GET /metrics" gets 200 with the text the page callback returns
// (Content-Type: text/plain; version=0.0.4); HEAD the same headers; other
// paths 404, other methods 405, a malformed request 400, a request whose
// headers exceed max_request_bytes 431, one not complete within
// read_timeout 408. Every answer closes the connection.
//
// One thread serves one connection at a time, so a slow or silent client
// holds it for at most read_timeout (plus as long again to write the
// answer); the server never reads a body and never holds more than
// max_request_bytes of a request.
//
// Thread safety: Start, Stop and the destructor from one thread; `page`
// runs on the server's thread and must be safe to call from there.
#ifndef PST_MONITORING_METRICS_HTTP_SERVER_H_
#define PST_MONITORING_METRICS_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/status.h"

namespace pst {

struct MetricsHttpServerOptions {
  std::string host = "127.0.0.1";  // resolved and bound as given; "*": every interface
  int port = 0;                    // 0: a port the OS picks (see port())
  size_t max_request_bytes = 8192;
  std::chrono::milliseconds read_timeout{2000};
};

class MetricsHttpServer {
 public:
  MetricsHttpServer(MetricsHttpServerOptions options, std::function<std::string()> page);
  // Stops the thread and closes the socket.
  ~MetricsHttpServer();

  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Binds host:port and starts serving. Unavailable when the address cannot
  // be resolved or bound (e.g. the port is taken).
  Status Start();
  // The bound port, once started.
  int port() const { return port_; }
  // Stops serving; a connection being served is dropped. Idempotent.
  void Stop();

 private:
  void Loop();
  void Serve(int connection);
  // Reads the request head (up to the blank line) into *head: false with
  // *status set to the answer's status code when it cannot.
  bool ReadHead(int connection, std::string* head, int* status);
  std::string Answer(const std::string& head);
  // False when stopping or past `deadline`.
  bool WaitFor(int fd, short events, MonotonicClock::TimePoint deadline);
  void SendAll(int connection, const std::string& bytes);

  const MetricsHttpServerOptions options_;
  const std::function<std::string()> page_;
  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: Stop() writes to wake_[1]
  int port_ = 0;
  std::thread thread_;
};

}  // namespace pst

#endif  // PST_MONITORING_METRICS_HTTP_SERVER_H_
