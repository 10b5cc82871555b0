#include "tests/integration/ps_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "common/clock.h"
#include "model/layers/initializer.h"
#include "ps/shard_admin.h"

namespace pst {

Tensor Filled(Shape shape, float value) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = value;
  return t;
}

void PsFixture::StartPs(const std::vector<VariableSpec>& variables,
                        const std::vector<std::string>& flags, ShardConfig config) {
  cluster_ = std::make_unique<LocalCluster>(
      1, 1, MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  ps_ = &cluster_->StartTask("ps", 0, flags);
  auto placement = Placement::Compute(WithGlobalStep(variables), {1});
  ASSERT_TRUE(placement.ok());
  placement_ = std::make_unique<Placement>(*placement);
  auto chief = NewChiefClient();
  ASSERT_TRUE(
      ShardAdmin(&*chief).GetShardStatus(0, SteadyClock().Now() + std::chrono::seconds(30)).ok())
      << ps_->Log();
  std::vector<Tensor> values;
  for (const VariableSpec& spec : placement_->variables()) {
    values.push_back(InitializeVariable(spec, 1));
  }
  ASSERT_TRUE(ShardAdmin(&*chief).Initialize(config, values).ok());
}

std::unique_ptr<PsClient> PsFixture::NewClient(int index) {
  return NewClientWithKeys(curve_, 20000, index);
}

std::unique_ptr<PsClient> PsFixture::NewChiefClient() {
  return NewClientWithKeys(curve_, 20000, 0, wire::Role::Chief);
}

std::unique_ptr<PsClient> PsFixture::NewClientWithKeys(std::optional<CurveKeys> curve,
                                                       int timeout_ms, int index, wire::Role role) {
  ClusterSpec spec;
  spec.ps = {{"127.0.0.1", cluster_->ports()[1]}};
  ClientIdentity identity;
  identity.role = role;
  identity.index = index;
  identity.cluster_id = kClusterId;
  identity.rpc_timeout_ms = timeout_ms;
  identity.curve = std::move(curve);
  identity.wire_dtype = client_wire_dtype_;
  return std::make_unique<PsClient>(transport_, spec, *placement_, identity);
}

std::string PsFixture::endpoint() const {
  return "tcp://127.0.0.1:" + std::to_string(cluster_->ports()[1]);
}

void PsFixture::ResetPsPeakResidentBytes() const {
  std::ofstream out("/proc/" + std::to_string(ps_->pid()) + "/clear_refs");
  out << "5";
  out.flush();
  ASSERT_TRUE(out.good()) << "cannot reset the ps's peak resident memory";
}

size_t PsFixture::StatusBytes(const std::string& key) const {
  std::ifstream in("/proc/" + std::to_string(ps_->pid()) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;  // kB
  }
  ADD_FAILURE() << "no " << key << " for the ps";
  return 0;
}

RawZmtpPeer::RawZmtpPeer(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
  CHECK_GE(fd_, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
}

RawZmtpPeer::~RawZmtpPeer() { ::close(fd_); }

bool RawZmtpPeer::Handshake() {
  // Signature, version 3.1, mechanism "NULL" padded to 20 bytes, as-server 0,
  // 31 bytes of filler: 64 bytes.
  std::string greeting = std::string("\xff") + std::string(8, '\0') + "\x7f\x03\x01" + "NULL" +
                         std::string(16, '\0') + std::string(1 + 31, '\0');
  const std::string property =
      std::string("\x0bSocket-Type") + std::string("\0\0\0\x06", 4) + "DEALER";
  const std::string ready = std::string("\x05READY") + property;
  const std::string command = std::string("\x04") + static_cast<char>(ready.size()) + ready;
  if (::send(fd_, greeting.data(), greeting.size(), MSG_NOSIGNAL) != 64) return false;
  std::string theirs;
  if (!ReadExactly(64, &theirs)) return false;
  if (::send(fd_, command.data(), command.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(command.size())) {
    return false;
  }
  std::string header, body;  // the server's READY: a short command
  return ReadExactly(2, &header) && header[0] == '\x04' &&
         ReadExactly(static_cast<uint8_t>(header[1]), &body);
}

void RawZmtpPeer::SendFrame(const std::string& bytes, bool more, size_t sent) {
  std::string frame(1, static_cast<char>((more ? 1 : 0) | (bytes.size() > 255 ? 2 : 0)));
  if (bytes.size() > 255) {
    for (int shift = 56; shift >= 0; shift -= 8)
      frame += static_cast<char>(uint64_t{bytes.size()} >> shift);
  } else {
    frame += static_cast<char>(bytes.size());
  }
  frame += bytes;
  frame.resize(std::min(sent, frame.size()));
  for (size_t done = 0; done < frame.size();) {
    const ssize_t n = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;  // closed by the server: the test sees it afterwards
    done += n;
  }
}

bool RawZmtpPeer::ClosedByServerWithin(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd item{fd_, POLLIN, 0};
    if (::poll(&item, 1, 100) <= 0) continue;
    if (::recv(fd_, buffer, sizeof(buffer), 0) <= 0) return true;
  }
  return false;
}

bool RawZmtpPeer::ReadExactly(size_t n, std::string* out) {
  out->resize(n);
  for (size_t done = 0; done < n;) {
    pollfd item{fd_, POLLIN, 0};
    if (::poll(&item, 1, 10000) <= 0) return false;
    const ssize_t got = ::recv(fd_, out->data() + done, n - done, 0);
    if (got <= 0) return false;
    done += got;
  }
  return true;
}

}  // namespace pst
