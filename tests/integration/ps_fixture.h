// PsFixture: one real ps process on 127.0.0.1, initialized by the test
// acting as the chief, for tests that talk to a ps directly.
#ifndef PST_TESTS_INTEGRATION_PS_FIXTURE_H_
#define PST_TESTS_INTEGRATION_PS_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ps/ps_client.h"
#include "tests/integration/local_cluster.h"

namespace pst {

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
                                              int index = 0);
  std::string endpoint() const;

  zmq::context_t context_{1};
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<Placement> placement_;
  ChildProcess* ps_ = nullptr;
  std::optional<CurveKeys> curve_;  // set before StartPs for a CURVE ps
};

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_PS_FIXTURE_H_
