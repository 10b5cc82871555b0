#include "transport/bind_address.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

bool OnlyTenDotOne(const std::string& address) { return address == "10.0.0.1"; }

TEST(BindAddressTest, BindsTheLocalAddressTheNameResolvesTo) {
  const BindAddress b =
      DecideBindAddress("mnist-ps-0", "", {"192.0.2.9", "10.0.0.1"}, "", OnlyTenDotOne);
  EXPECT_EQ(b.address, "10.0.0.1");
  EXPECT_EQ(b.Endpoint(2222), "tcp://10.0.0.1:2222");
  EXPECT_NE(b.reason.find("'mnist-ps-0' resolves to it"), std::string::npos) << b.reason;
}

// A Service's cluster IP routes to the pod but is not one of its addresses.
TEST(BindAddressTest, ANameOfAnotherMachinesAddressBindsEveryInterface) {
  const BindAddress b = DecideBindAddress("svc", "", {"192.0.2.9"}, "", OnlyTenDotOne);
  EXPECT_EQ(b.address, "*");
  EXPECT_EQ(b.Endpoint(2222), "tcp://*:2222");
  EXPECT_NE(b.reason.find("192.0.2.9, not an address of this machine"), std::string::npos)
      << b.reason;
}

TEST(BindAddressTest, ANameThatDoesNotResolveYetBindsEveryInterface) {
  const BindAddress b =
      DecideBindAddress("late", "", {}, "Name or service not known", OnlyTenDotOne);
  EXPECT_EQ(b.address, "*");
  EXPECT_NE(b.reason.find("'late' does not resolve (Name or service not known)"), std::string::npos)
      << b.reason;
}

TEST(BindAddressTest, BindHostWins) {
  const BindAddress b = DecideBindAddress("h", "0.0.0.0", {"10.0.0.1"}, "", OnlyTenDotOne);
  EXPECT_EQ(b.address, "0.0.0.0");
  EXPECT_EQ(b.reason, "--bind_host=0.0.0.0");
}

TEST(BindAddressTest, LocalhostBindsLoopback) {
  EXPECT_EQ(ChooseBindAddress("localhost", "").address, "127.0.0.1");
  EXPECT_EQ(ChooseBindAddress("127.0.0.1", "").address, "127.0.0.1");
}

// TEST-NET-3 (RFC 5737) is never an address of this machine.
TEST(BindAddressTest, AnAddressOfNoLocalInterfaceBindsEveryInterface) {
  EXPECT_EQ(ChooseBindAddress("203.0.113.5", "").address, "*");
}

TEST(BindAddressTest, BindHostMustBeNumericOrStar) {
  EXPECT_TRUE(ValidateBindHost("").ok());
  EXPECT_TRUE(ValidateBindHost("*").ok());
  EXPECT_TRUE(ValidateBindHost("10.1.2.3").ok());
  const Status bad = ValidateBindHost("eth0.example");
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("--bind_host=eth0.example"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace pst
