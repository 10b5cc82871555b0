// CURVE: a ps started with the cluster's keys serves clients that hold them
// and refuses a client without keys and one with another key; the model is
// unchanged by the refused ones. A whole cluster trains with CURVE on.
#include <filesystem>

#include "tests/integration/ps_fixture.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

Tensor Ones(int n) {
  Tensor t(DType::kFloat32, {n});
  for (int i = 0; i < n; ++i) t.f32()[i] = 1.0f;
  return t;
}

class CurvePsTest : public PsFixture {
 protected:
  void SetUp() override {
    keys_dir_ = MakeTestDir("curve-keys");
    curve_ = *NewCurveKeys();
    ASSERT_TRUE(SaveCurveKeys(keys_dir_, *curve_).ok());
    StartPs({{"w", DType::kFloat32, {4}, Initializer::kZeros}}, {"--curve_keys_dir=" + keys_dir_});
  }
  std::string keys_dir_;
};

TEST_F(CurvePsTest, PeersWithoutTheClusterKeyCannotPullOrPush) {
  auto member = NewClient();
  std::vector<Tensor> before;
  ASSERT_TRUE(member->Pull({1}, &before).ok());

  auto plain = NewClientWithKeys(std::nullopt, 500);
  std::vector<Tensor> values;
  EXPECT_EQ(plain->Pull({1}, &values).code(), Code::kDeadlineExceeded);
  EXPECT_EQ(plain->Push({1}, {Ones(4)}, false).status().code(), Code::kDeadlineExceeded);

  CurveKeys stranger = *NewCurveKeys();
  stranger.public_key = curve_->public_key;  // knows the public key, not the secret
  auto impostor = NewClientWithKeys(stranger, 500);
  EXPECT_FALSE(impostor->Push({1}, {Ones(4)}, false).ok());

  std::vector<Tensor> after;
  ASSERT_TRUE(member->Pull({1}, &after).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(after[0].f32()[i], before[0].f32()[i]);
  EXPECT_TRUE(member->Push({1}, {Ones(4)}, false).ok());
}

class CurveClusterTest : public SyntheticDataTest {};

TEST_F(CurveClusterTest, ClusterTrainsWithCurveOn) {
  const std::string keys = TestPath("-keys");
  std::filesystem::create_directories(keys);
  ASSERT_TRUE(SaveCurveKeys(keys, *NewCurveKeys()).ok());
  LocalCluster cluster(2, 2, TestDir());
  cluster.StartAll({"--data_dir=" + data_dir(), "--model=mlp", "--batch_size=50",
                    "--train_steps=200", "--eval_every_steps=0", "--curve_keys_dir=" + keys});
  const auto exits = cluster.WaitAll(std::chrono::seconds(120));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits);
  // Test accuracy 1.0000 in each of 5 seeds (--seed=1..5; 2026-11-28, 2-core dev, shared).
  EXPECT_GT(ReportValue(cluster.task("chief").Log(), "Test-Accuracy: ").value_or(0), 0.9);
}

TEST_F(CurveClusterTest, MissingKeyFileIsAFlagError) {
  LocalCluster cluster(1, 1, TestDir());
  ChildProcess& ps = cluster.StartTask("ps", 0, {"--curve_keys_dir=/nonexistent"});
  EXPECT_EQ(ps.Wait(std::chrono::seconds(30)), 2);
  EXPECT_NE(ps.Log().find("scripts/gen_keys.sh"), std::string::npos) << ps.Log();
}

}  // namespace
}  // namespace pst
