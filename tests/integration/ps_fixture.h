// PsFixture: one real ps process on 127.0.0.1, initialized by the test
// acting as the chief, for tests that talk to a ps directly.
#ifndef PST_TESTS_INTEGRATION_PS_FIXTURE_H_
#define PST_TESTS_INTEGRATION_PS_FIXTURE_H_

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ps/ps_client.h"
#include "tests/integration/local_cluster.h"
#include "transport/zmq_transport.h"

namespace pst {

// A float32 tensor of `shape` with every element `value`.
Tensor Filled(Shape shape, float value);

class PsFixture : public ::testing::Test {
 protected:
  static constexpr uint64_t kClusterId = 4242;

  // Starts the ps with `flags` and initializes `variables` (after the
  // global step) with `config` (by default SGD at learning rate 1, async).
  void StartPs(const std::vector<VariableSpec>& variables,
               const std::vector<std::string>& flags = {}, ShardConfig config = DefaultConfig());
  static ShardConfig DefaultConfig() {
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    return config;
  }
  // A client holding `curve` (by default the fixture's keys, if any).
  std::unique_ptr<PsClient> NewClient(int index = 0);
  std::unique_ptr<PsClient> NewClientWithKeys(std::optional<CurveKeys> curve, int timeout_ms,
                                              int index = 0, wire::Role role = wire::Role::Client);
  // A client speaking as the chief, from 127.0.0.1 (the chief host the ps
  // is given): the one allowed to initialize, checkpoint and shut it down.
  std::unique_ptr<PsClient> NewChiefClient();
  std::string endpoint() const;
  // The ps's resident memory now (VmRSS) and at its peak so far (VmHWM).
  size_t PsResidentBytes() const { return StatusBytes("VmRSS:"); }
  size_t PsPeakResidentBytes() const { return StatusBytes("VmHWM:"); }
  // Starts the peak over from the resident memory now (clear_refs 5), so
  // that it measures what comes next, not the ps's start (which may touch
  // more than it keeps).
  void ResetPsPeakResidentBytes() const;

  size_t StatusBytes(const std::string& key) const;

  zmq::context_t context_{1};
  ZmqTransport transport_{context_};
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<Placement> placement_;
  ChildProcess* ps_ = nullptr;
  std::optional<CurveKeys> curve_;             // set before StartPs for a CURVE ps
  DType client_wire_dtype_ = DType::kFloat32;  // the --wire_dtype of clients made from now on
};

// A client that speaks ZMTP 3.1 (NULL mechanism, as a DEALER) over a raw
// TCP socket, so a test can do what no ZeroMQ socket does: stop in the
// middle of a message or of a frame, stay silent, ignore heartbeats.
class RawZmtpPeer {
 public:
  explicit RawZmtpPeer(int port);  // connects to 127.0.0.1:port
  ~RawZmtpPeer();
  RawZmtpPeer(const RawZmtpPeer&) = delete;
  RawZmtpPeer& operator=(const RawZmtpPeer&) = delete;

  // Greeting and READY, both ways. False when the server did not answer.
  bool Handshake();
  // One frame, or only its first `sent` bytes (the frame header included).
  void SendFrame(const std::string& bytes, bool more, size_t sent = std::string::npos);
  // Reads and drops what the server sends until it closes the connection
  // (true) or `timeout` passes (false).
  bool ClosedByServerWithin(std::chrono::milliseconds timeout);

 private:
  bool ReadExactly(size_t n, std::string* out);
  int fd_;
};

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_PS_FIXTURE_H_
