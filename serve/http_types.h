// HttpRequest and HttpResponse: what the HTTP server (serve/http_server.h)
// hands the request handler (serve/request_handler.h) and gets back, so that
// the handler is a plain function of values, testable without sockets.
#ifndef PST_SERVE_HTTP_TYPES_H_
#define PST_SERVE_HTTP_TYPES_H_

#include <string>
#include <utility>
#include <vector>

namespace pst {

struct HttpRequest {
  std::string method;        // "GET", "POST", ...
  std::string path;          // "/predict": the URL's path, without its query
  std::string content_type;  // the Content-Type header's value; "" without one
  std::string body;
  // The body was over the server's limit: it was not kept (body is empty).
  bool body_too_large = false;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more headers ("Allow")
};

}  // namespace pst

#endif  // PST_SERVE_HTTP_TYPES_H_
