#include "tests/integration/network_lab.h"

#include <glog/logging.h>
#include <unistd.h>

#include <cstdlib>

namespace pst {

StatusOr<std::unique_ptr<NetworkLab>> NetworkLab::Create(int hosts) {
  if (::geteuid() != 0) return FailedPrecondition("network namespaces need root");
  const int id = ::getpid() % 100000;
  std::unique_ptr<NetworkLab> lab(
      new NetworkLab("p" + std::to_string(id), "10.77." + std::to_string(20 + id % 200)));
  const std::string sw = lab->tag_ + "sw";
  PST_RETURN_IF_ERROR(lab->Run("ip netns add " + sw));
  lab->namespaces_.push_back(sw);
  PST_RETURN_IF_ERROR(
      lab->Run("ip -n " + sw + " link add br0 type bridge && ip -n " + sw + " link set br0 up"));
  for (int h = 0; h < hosts; ++h) {
    const std::string ns = lab->Host(h), host_end = lab->tag_ + "h" + std::to_string(h),
                      switch_end = lab->SwitchPort(h);
    PST_RETURN_IF_ERROR(lab->Run("ip netns add " + ns));
    lab->namespaces_.push_back(ns);
    PST_RETURN_IF_ERROR(
        lab->Run("ip link add " + host_end + " type veth peer name " + switch_end +
                 " && ip link set " + host_end + " netns " + ns + " && ip link set " + switch_end +
                 " netns " + sw + " && ip -n " + sw + " link set " + switch_end +
                 " master br0 && ip -n " + sw + " link set " + switch_end + " up && ip -n " + ns +
                 " addr add " + lab->address(h) + "/24 dev " + host_end + " && ip -n " + ns +
                 " link set " + host_end + " up && ip -n " + ns + " link set lo up"));
  }
  return lab;
}

NetworkLab::~NetworkLab() {
  for (const std::string& ns : namespaces_) {
    if (const Status deleted = Run("ip netns del " + ns + " 2>/dev/null"); !deleted.ok()) {
      LOG(WARNING) << "network namespace " << ns << " may be left: " << deleted.ToString();
    }
  }
}

std::string NetworkLab::Host(int host) const { return tag_ + "-host" + std::to_string(host); }
std::string NetworkLab::SwitchPort(int host) const { return tag_ + "b" + std::to_string(host); }

std::string NetworkLab::address(int host) const { return prefix_ + "." + std::to_string(host + 1); }

std::vector<std::string> NetworkLab::On(int host) const {
  return {"/usr/sbin/ip", "netns", "exec", Host(host)};
}

Status NetworkLab::CutLink(int host) {
  return Run("ip -n " + tag_ + "sw link set " + SwitchPort(host) + " down");
}

Status NetworkLab::Run(const std::string& command) {
  const int rc = std::system((command + " >/dev/null 2>&1").c_str());
  if (rc != 0) return Unavailable("'" + command + "' failed (exit " + std::to_string(rc) + ")");
  return Status::OK();
}

}  // namespace pst
