#include "tests/integration/ps_fixture.h"

#include "model/initializer.h"

namespace pst {

void PsFixture::StartPs(const std::vector<VariableSpec>& variables,
                        const std::vector<std::string>& flags, ShardConfig config) {
  cluster_ = std::make_unique<LocalCluster>(
      1, 1, MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  ps_ = &cluster_->StartTask("ps", 0, flags);
  auto placement = Placement::Compute(WithGlobalStep(variables), {1});
  ASSERT_TRUE(placement.ok());
  placement_ = std::make_unique<Placement>(*placement);
  auto chief = NewClient();
  ASSERT_TRUE(chief->GetShardStatus(0, Clock::now() + std::chrono::seconds(30)).ok())
      << ps_->Log();
  std::vector<Tensor> values;
  for (const VariableSpec& spec : placement_->variables()) {
    values.push_back(InitializeVariable(spec, 1));
  }
  ASSERT_TRUE(chief->Initialize(config, values).ok());
}

std::unique_ptr<PsClient> PsFixture::NewClient(int index) {
  return NewClientWithKeys(curve_, 20000, index);
}

std::unique_ptr<PsClient> PsFixture::NewClientWithKeys(std::optional<CurveKeys> curve,
                                                       int timeout_ms, int index) {
  ClusterSpec spec;
  spec.ps = {{"127.0.0.1", cluster_->ports()[1]}};
  ClientIdentity identity;
  identity.index = index;
  identity.cluster_id = kClusterId;
  identity.rpc_timeout_ms = timeout_ms;
  identity.curve = std::move(curve);
  return std::make_unique<PsClient>(context_, spec, *placement_, identity);
}

std::string PsFixture::endpoint() const {
  return "tcp://127.0.0.1:" + std::to_string(cluster_->ports()[1]);
}

}  // namespace pst
