// Which address a server binds, given the host the cluster spec names for it.
//
// ZeroMQ's bind takes a numeric address or an interface name, not a host
// name ("tcp://localhost:2222" fails with "No such device"), and a name may
// resolve to an address this machine does not hold (a Kubernetes Service's
// cluster IP). So a server binds the address its host resolves to when this
// machine holds it, and every interface ("*") otherwise; --bind_host names
// the address outright. Clients keep connecting by name.
#ifndef PST_TRANSPORT_BIND_ADDRESS_H_
#define PST_TRANSPORT_BIND_ADDRESS_H_

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

inline constexpr char kAllInterfaces[] = "*";

struct BindAddress {
  std::string address;  // numeric IPv4 address, or kAllInterfaces
  std::string reason;   // for the log: why this address
  // "tcp://127.0.0.1:2222", "tcp://*:2222".
  std::string Endpoint(int port) const { return "tcp://" + address + ":" + std::to_string(port); }
};

// The decision, from the facts: `resolved` holds the IPv4 addresses of
// `host` (empty when it did not resolve, `resolve_error` then says why);
// `is_local` says whether this machine can bind an address. A non-empty
// `bind_host` (--bind_host) wins.
BindAddress DecideBindAddress(const std::string& host, const std::string& bind_host,
                              const std::vector<std::string>& resolved,
                              const std::string& resolve_error,
                              const std::function<bool(const std::string&)>& is_local);

// Resolves `host` (IPv4, as ZeroMQ's connect does by default) and asks the
// kernel which of its addresses it can bind, then decides as above.
BindAddress ChooseBindAddress(const std::string& host, const std::string& bind_host);

// Whether the host of a "tcp://host:port" endpoint is this machine: every
// IPv4 address it resolves to is one of this machine's (loopback included).
// False for other schemes and for a name that does not resolve.
bool EndpointIsOnThisHost(const std::string& endpoint);

// OK for "" (decide from the host name), "*" and a numeric IPv4 address;
// InvalidArgument naming --bind_host otherwise.
Status ValidateBindHost(const std::string& bind_host);

}  // namespace pst

#endif  // PST_TRANSPORT_BIND_ADDRESS_H_
