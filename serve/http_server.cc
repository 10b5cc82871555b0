#include "serve/http_server.h"

#include <glog/logging.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/parse_number.h"

namespace pst {
namespace {

// One request as read so far: libmicrohttpd keeps it for us between calls.
struct Upload {
  HttpRequest request;
};

MHD_Result Send(MHD_Connection* connection, const HttpResponse& response) {
  MHD_Response* answer = MHD_create_response_from_buffer(
      response.body.size(), const_cast<char*>(response.body.data()), MHD_RESPMEM_MUST_COPY);
  if (answer == nullptr) return MHD_NO;  // out of memory: the connection closes
  MHD_add_response_header(answer, MHD_HTTP_HEADER_CONTENT_TYPE, response.content_type.c_str());
  for (const auto& [name, value] : response.headers) {
    MHD_add_response_header(answer, name.c_str(), value.c_str());
  }
  const MHD_Result queued = MHD_queue_response(connection, response.status, answer);
  MHD_destroy_response(answer);  // libmicrohttpd holds it until sent
  return queued;
}

// Whether the request's Content-Length says its body is over `limit`.
bool DeclaredTooLarge(MHD_Connection* connection, size_t limit) {
  const char* length =
      MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  uint64_t bytes = 0;
  return length != nullptr && ParseNumber(std::string_view(length), &bytes) && bytes > limit;
}

// libmicrohttpd calls this once the headers are in, then with each part of
// the body, then once more when the body is complete.
MHD_Result OnRequest(void* server_pointer, MHD_Connection* connection, const char* url,
                     const char* method, const char* /*version*/, const char* upload_data,
                     size_t* upload_data_size, void** request_context) {
  const auto* server = static_cast<const HttpServer*>(server_pointer);
  const size_t limit = server->options().max_request_bytes;
  auto* upload = static_cast<Upload*>(*request_context);
  if (upload == nullptr) {  // the headers are in
    upload = new Upload;    // deleted by OnCompleted
    *request_context = upload;
    upload->request.method = method;
    upload->request.path = url;
    const char* type =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (type != nullptr) upload->request.content_type = type;
    if (DeclaredTooLarge(connection, limit)) {
      // Answered before the body: libmicrohttpd drops it and closes the
      // connection after the answer.
      upload->request.body_too_large = true;
      return Send(connection, server->Handle(upload->request));
    }
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    HttpRequest& request = upload->request;
    if (!request.body_too_large && *upload_data_size <= limit - request.body.size()) {
      request.body.append(upload_data, *upload_data_size);
    } else {  // a chunked body over the limit: the rest is read and dropped
      request.body_too_large = true;
      std::string().swap(request.body);
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  return Send(connection, server->Handle(upload->request));
}

void OnCompleted(void* /*cls*/, MHD_Connection* /*connection*/, void** request_context,
                 MHD_RequestTerminationCode /*why*/) {
  delete static_cast<Upload*>(*request_context);
  *request_context = nullptr;
}

// libmicrohttpd's messages: a port taken, a client that sent no HTTP or
// broke off. At most one a second: clients must not flood the log.
void OnLog(void* /*cls*/, const char* format, va_list args) {
  char message[512];
  std::vsnprintf(message, sizeof(message), format, args);
  LOG_EVERY_T(WARNING, 1.0) << "libmicrohttpd: " << message;
}

// The first address `host` resolves to, for listening on `port`.
Status Resolve(const std::string& host, int port, sockaddr_storage* address) {
  addrinfo hints{};
  hints.ai_family = host == "*" ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int error = getaddrinfo(host == "*" ? nullptr : host.c_str(), std::to_string(port).c_str(),
                                &hints, &found);
  if (error != 0) {
    return InvalidArgument("cannot resolve host '" + host + "': " + gai_strerror(error));
  }
  std::memcpy(address, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  return Status::OK();
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  CHECK(daemon_ == nullptr) << "started twice";
  sockaddr_storage address{};
  PST_RETURN_IF_ERROR(Resolve(options_.host, options_.port, &address));
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (address.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  daemon_ = MHD_start_daemon(flags, static_cast<uint16_t>(options_.port), /*accept_policy=*/nullptr,
                             nullptr, &OnRequest, this,
                             // The logger first, so that it gets the other options' messages too.
                             MHD_OPTION_EXTERNAL_LOGGER, &OnLog, nullptr, MHD_OPTION_SOCK_ADDR,
                             reinterpret_cast<const sockaddr*>(&address),
                             MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(options_.threads),
                             MHD_OPTION_CONNECTION_LIMIT, options_.connection_limit,
                             MHD_OPTION_CONNECTION_MEMORY_LIMIT, options_.connection_memory_bytes,
                             MHD_OPTION_CONNECTION_TIMEOUT, options_.idle_timeout_seconds,
                             MHD_OPTION_NOTIFY_COMPLETED, &OnCompleted, nullptr, MHD_OPTION_END);
  if (daemon_ == nullptr) {
    return Unavailable("cannot serve HTTP on " + options_.host + ":" +
                       std::to_string(options_.port) + " (libmicrohttpd's reason is logged)");
  }
  port_ = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT)->port;
  return Status::OK();
}

void HttpServer::Stop() {
  if (daemon_ == nullptr) return;
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace pst
