#include "transport/bind_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace pst {
namespace {

bool IsNumericIpv4(const std::string& text) {
  in_addr unused{};
  return inet_pton(AF_INET, text.c_str(), &unused) == 1;
}

// The kernel's own answer: binding port 0 of an address succeeds exactly
// when one of this machine's interfaces holds it (all of 127.0.0.0/8 too).
bool CanBindLocally(const std::string& address) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) return false;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool bound = bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return bound;
}

}  // namespace

BindAddress DecideBindAddress(const std::string& host, const std::string& bind_host,
                              const std::vector<std::string>& resolved,
                              const std::string& resolve_error,
                              const std::function<bool(const std::string&)>& is_local) {
  if (!bind_host.empty()) return {bind_host, "--bind_host=" + bind_host};
  if (resolved.empty()) {
    // The name may resolve later (Kubernetes publishes a pod's DNS name
    // after it starts): every interface includes whatever it will name.
    return {kAllInterfaces,
            "'" + host + "' does not resolve (" + resolve_error + "): every interface"};
  }
  for (const std::string& address : resolved) {
    if (is_local(address)) {
      return {address, IsNumericIpv4(host) ? "the address given"
                                           : "'" + host + "' resolves to it on this machine"};
    }
  }
  std::string all;
  for (const std::string& address : resolved) all += (all.empty() ? "" : ", ") + address;
  return {kAllInterfaces, "'" + host + "' resolves to " + all +
                              ", not an address of this machine: every interface"};
}

namespace {

// The IPv4 addresses `host` resolves to; empty, with *error saying why,
// when it does not.
std::vector<std::string> ResolveIpv4(const std::string& host, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> resolved;
  if (const int code = getaddrinfo(host.c_str(), nullptr, &hints, &found); code != 0) {
    *error = gai_strerror(code);
    return resolved;
  }
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char numeric[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, numeric, sizeof numeric) != nullptr &&
        std::find(resolved.begin(), resolved.end(), numeric) == resolved.end()) {
      resolved.push_back(numeric);
    }
  }
  freeaddrinfo(found);
  if (resolved.empty()) *error = "no IPv4 address";
  return resolved;
}

}  // namespace

BindAddress ChooseBindAddress(const std::string& host, const std::string& bind_host) {
  if (!bind_host.empty()) return DecideBindAddress(host, bind_host, {}, "", CanBindLocally);
  std::string error;
  const std::vector<std::string> resolved = ResolveIpv4(host, &error);
  return DecideBindAddress(host, bind_host, resolved, error, CanBindLocally);
}

bool EndpointIsOnThisHost(const std::string& endpoint) {
  const std::string scheme = "tcp://";
  const size_t colon = endpoint.rfind(':');
  if (endpoint.compare(0, scheme.size(), scheme) != 0 || colon <= scheme.size()) return false;
  const std::string host = endpoint.substr(scheme.size(), colon - scheme.size());
  std::string error;
  const std::vector<std::string> resolved = ResolveIpv4(host, &error);
  return !resolved.empty() && std::all_of(resolved.begin(), resolved.end(), CanBindLocally);
}

Status ValidateBindHost(const std::string& bind_host) {
  if (bind_host.empty() || bind_host == kAllInterfaces || IsNumericIpv4(bind_host)) {
    return Status::OK();
  }
  return InvalidArgument("--bind_host=" + bind_host +
                         " is not a numeric IPv4 address or * (every interface)");
}

}  // namespace pst
