// NetworkLab: test hosts in Linux network namespaces, joined by veth pairs to
// a bridge in a "switch" namespace, so a multi-host cluster runs on one
// machine and a host's link can be cut. Needs root; Create() says why not
// otherwise. Everything it made is deleted by the destructor.
#ifndef PST_TESTS_INTEGRATION_NETWORK_LAB_H_
#define PST_TESTS_INTEGRATION_NETWORK_LAB_H_

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

class NetworkLab {
 public:
  // `hosts` namespaces with addresses <prefix>.1 .. <prefix>.<hosts>/24.
  static StatusOr<std::unique_ptr<NetworkLab>> Create(int hosts);
  ~NetworkLab();

  std::string address(int host) const;
  // The argv prefix that runs a program on `host` ("ip netns exec NS").
  std::vector<std::string> On(int host) const;
  // Takes `host`'s link down (on the switch side): the host is cut off.
  Status CutLink(int host);

 private:
  NetworkLab(std::string tag, std::string prefix)
      : tag_(std::move(tag)), prefix_(std::move(prefix)) {}
  Status Run(const std::string& command);
  std::string Host(int host) const;
  std::string SwitchPort(int host) const;

  const std::string tag_;     // unique per test process: names stay distinct
  const std::string prefix_;  // "10.77.N"
  std::vector<std::string> namespaces_;
};

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_NETWORK_LAB_H_
