// HttpServer: HTTP/1.1 over libmicrohttpd, for the serve executable. A pool
// of `threads` threads, each with its own epoll set, accepts and serves
// connections (keep-alive, many per thread); each complete request goes to
// the handler, on the thread that read it. libmicrohttpd parses the HTTP:
// a malformed request gets its 400 and the connection closes.
//
// Bodies are kept whole up to max_request_bytes. A larger one is not kept:
// the handler gets the request with body_too_large set (answered at once when
// Content-Length says so; after the body, read and dropped, when it is
// chunked). So the server holds at most about connection_limit x
// max_request_bytes of bodies, plus connection_memory_bytes per connection
// for headers.
//
// Thread safety: Start, Stop and the destructor from one thread; the handler
// runs on the pool's threads, several at once.
#ifndef PST_SERVE_HTTP_SERVER_H_
#define PST_SERVE_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "common/status.h"
#include "serve/http_types.h"

struct MHD_Daemon;

namespace pst {

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // resolved and bound as given; "*": every interface
  int port = 0;                    // 0: a port the OS picks (see port())
  int threads = 1;
  size_t max_request_bytes = size_t{16} << 20;
  unsigned connection_limit = 10000;           // open at once; more are refused
  size_t connection_memory_bytes = 64 * 1024;  // headers and read buffer, per connection
  unsigned idle_timeout_seconds = 60;          // a silent connection is closed after this
};

using HttpHandler = std::function<HttpResponse(const HttpRequest& request)>;

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port and starts the threads. InvalidArgument for a host that
  // does not resolve; Unavailable when libmicrohttpd cannot start (the port
  // is taken, say: its reason is logged).
  Status Start();
  // The bound port, once started.
  int port() const { return port_; }
  // Stops accepting, finishes the requests being handled, closes every
  // connection and joins the threads. Idempotent.
  void Stop();

  // For libmicrohttpd's callbacks (http_server.cc) only.
  const HttpServerOptions& options() const { return options_; }
  HttpResponse Handle(const HttpRequest& request) const { return handler_(request); }

 private:
  const HttpServerOptions options_;
  const HttpHandler handler_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace pst

#endif  // PST_SERVE_HTTP_SERVER_H_
