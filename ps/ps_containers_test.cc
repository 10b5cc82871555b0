// Named containers on one shard (PsService over the in-process transport):
// two jobs' variables of the same names kept apart, another job's requests
// refused, a held container taken only with a reset, a job's shutdown
// releasing its container alone, per-container load, sync step notices to
// the container's own chief.
#include <gtest/gtest.h>

#include "common/clock.h"
#include "model/layers/initializer.h"
#include "ps/ps_service.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"

namespace pst {
namespace {

constexpr uint64_t kJobA = 77;
constexpr uint64_t kJobB = 88;

// Records the step notices a container's chief would get.
struct RecordedNotices {
  std::vector<std::pair<int, int64_t>> notices;  // (chief port, step)
};

class RecordingChief : public ContainerChief {
 public:
  RecordingChief(RecordedNotices* record, int port) : record_(record), port_(port) {}
  void ShardApplied(int64_t step) override { record_->notices.push_back({port_, step}); }

 private:
  RecordedNotices* record_;
  const int port_;
};

class PsContainersTest : public ::testing::Test {
 protected:
  // Initializes `container` for `cluster`: "w" of `shape` filled with
  // `value` (and the global step).
  Status Init(const std::string& container, uint64_t cluster, float value, Shape shape = {2, 3},
              bool reset = false, TrainingMode mode = TrainingMode::kAsync) {
    auto placement = Placement::Compute(WithGlobalStep({{"w", DType::kFloat32, shape}}), {1});
    EXPECT_TRUE(placement.ok());
    std::vector<Tensor> values;
    for (const VariableSpec& spec : placement->variables()) {
      values.push_back(InitializeVariable(spec, 1));
    }
    for (int64_t i = 0; i < values[1].num_elements(); ++i) values[1].f32()[i] = value;
    ShardConfig config;
    config.optimizer.learning_rate = 1.0f;
    config.global_step_variable = kGlobalStepName;
    config.mode = mode;
    auto chief = shards_.Client(*placement, cluster, wire::Role::Chief, 0, container);
    return ShardAdmin(&*chief).Initialize(config, values,
                                          ContainerInit{5000 + static_cast<int>(cluster), reset});
  }
  StatusOr<ReceivedMessage> Call(const std::string& container, uint64_t cluster,
                                 OutgoingMessage request) {
    return shards_.Connect(0, cluster, container)->Call(request);
  }
  static OutgoingMessage Pull() {
    OutgoingMessage m;
    m.type = wire::MessageType::PullRequest;
    m.names = {"w"};
    return m;
  }
  static OutgoingMessage Push(float gradient, int64_t step = 0) {
    OutgoingMessage m;
    m.type = wire::MessageType::PushRequest;
    m.step = step;
    Tensor g(DType::kFloat32, {2, 3});
    for (int64_t i = 0; i < 6; ++i) g.f32()[i] = gradient;
    m.tensors.push_back({"w", 0, g});
    return m;
  }
  static OutgoingMessage Of(wire::MessageType type) {
    OutgoingMessage m;
    m.type = type;
    return m;
  }
  // The first element of "w" in `container`, as `cluster` pulls it.
  float First(const std::string& container, uint64_t cluster) {
    auto reply = Call(container, cluster, Pull());
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? reply->tensors()[0].f32()[0] : -1;
  }

  RecordedNotices recorded_;
  InProcessShards shards_{1, nullptr, [this](int port, uint64_t) {
                            return std::make_unique<RecordingChief>(&recorded_, port);
                          }};
};

TEST_F(PsContainersTest, TwoJobsKeepVariablesOfTheSameNamesApart) {
  ASSERT_TRUE(Init("a", kJobA, 1).ok());
  ASSERT_TRUE(Init("b", kJobB, 10).ok());
  ASSERT_TRUE(Call("a", kJobA, Push(0.5f)).ok());
  EXPECT_EQ(First("a", kJobA), 0.5f);
  EXPECT_EQ(First("b", kJobB), 10.0f);
}

TEST_F(PsContainersTest, AnotherJobsRequestsAreRefused) {
  ASSERT_TRUE(Init("a", kJobA, 1).ok());
  for (wire::MessageType type : {wire::MessageType::PullRequest, wire::MessageType::PushRequest}) {
    auto reply = Call("a", kJobB, type == wire::MessageType::PullRequest ? Pull() : Push(0.5f));
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.status().code(), Code::kPermissionDenied);
    EXPECT_EQ(reply.status().message(), "ps:0: container 'a' holds another job's variables");
  }
  EXPECT_EQ(First("a", kJobA), 1.0f);
  // Nor does another job's chief release it.
  EXPECT_EQ(Call("a", kJobB, Of(wire::MessageType::ShutdownRequest)).status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(First("a", kJobA), 1.0f);
}

TEST_F(PsContainersTest, AHeldContainerIsTakenOnlyWithAReset) {
  ASSERT_TRUE(Init("a", kJobA, 1).ok());
  const Status refused = Init("a", kJobB, 10, {3, 2});
  EXPECT_EQ(refused.code(), Code::kPermissionDenied);
  EXPECT_NE(refused.message().find("ps:0: container 'a' holds another job's variables (another "
                                   "model: variable 'w' is [2,3] there, [3,2] here): give this "
                                   "job another --container, or discard them with chief "
                                   "--reset_container"),
            std::string::npos)
      << refused.ToString();
  EXPECT_EQ(First("a", kJobA), 1.0f);
  ASSERT_TRUE(Init("a", kJobB, 10, {2, 3}, /*reset=*/true).ok());
  EXPECT_EQ(First("a", kJobB), 10.0f);
  EXPECT_EQ(Call("a", kJobA, Pull()).status().code(), Code::kPermissionDenied);
}

TEST_F(PsContainersTest, AJobsShutdownReleasesOnlyItsContainer) {
  ASSERT_TRUE(Init("a", kJobA, 1).ok());
  ASSERT_TRUE(Init("b", kJobB, 10).ok());
  ASSERT_TRUE(Call("a", kJobA, Of(wire::MessageType::ShutdownRequest)).ok());
  const Status gone = Call("a", kJobA, Pull()).status();
  EXPECT_EQ(gone.code(), Code::kFailedPrecondition);
  EXPECT_EQ(gone.message(), "ps:0: container 'a' is not initialized");
  EXPECT_EQ(First("b", kJobB), 10.0f);  // the ps serves on
  // Freed: any job may take the name now.
  ASSERT_TRUE(Init("a", kJobB, 3).ok());
  EXPECT_EQ(First("a", kJobB), 3.0f);
}

TEST_F(PsContainersTest, TheDefaultContainerIsRefusedWhileNamedOnesLive) {
  ASSERT_TRUE(Init("a", kJobA, 1).ok());
  const Status refused = Init("", kJobB, 1);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("ps:0: this ps serves named containers (a): give this job a "
                                   "--container too"),
            std::string::npos)
      << refused.ToString();
}

// A chief recovering from a lost ps initializes every shard again.
TEST_F(PsContainersTest, TheDefaultContainerIsInitializedAgainByItsChief) {
  ASSERT_TRUE(Init("", kJobA, 1).ok());
  ASSERT_TRUE(Call("", kJobA, Push(0.5f)).ok());
  ASSERT_TRUE(Init("", kJobA, 2).ok());
  EXPECT_EQ(First("", kJobA), 2.0f);
}

TEST_F(PsContainersTest, StatusReportsEveryContainersLoad) {
  ASSERT_TRUE(Init("a", kJobA, 1).ok());
  ASSERT_TRUE(Init("b", kJobB, 10).ok());
  ASSERT_TRUE(Call("a", kJobA, Push(0.5f)).ok());
  First("a", kJobA);
  auto placement = Placement::Compute(WithGlobalStep({{"w", DType::kFloat32, {2, 3}}}), {1});
  auto client = shards_.Client(*placement, kJobA, wire::Role::Chief, 0, "a");
  auto status =
      ShardAdmin(&*client).GetShardStatus(0, SteadyClock().Now() + std::chrono::seconds(2));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_TRUE(status->store.initialized);
  EXPECT_EQ(status->store.updates_applied, 1u);
  ASSERT_EQ(status->containers.size(), 2u);
  EXPECT_EQ(status->containers[0].name, "a");
  EXPECT_EQ(status->containers[0].variables, 2u);  // w and the global step
  EXPECT_EQ(status->containers[0].bytes_held, 6 * 4 + 8u);
  EXPECT_EQ(status->containers[0].pushes, 1u);
  EXPECT_EQ(status->containers[0].pulls, 1u);
  EXPECT_EQ(status->containers[1].name, "b");
  EXPECT_EQ(status->containers[1].pushes, 0u);
  // A container not there is one to initialize.
  auto fresh = ShardAdmin(&*shards_.Client(*placement, kJobA, wire::Role::Chief, 0, "c"))
                   .GetShardStatus(0, SteadyClock().Now() + std::chrono::seconds(2));
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->store.initialized);
}

TEST_F(PsContainersTest, SyncStepNoticesGoToTheContainersOwnChief) {
  ASSERT_TRUE(Init("a", kJobA, 1, {2, 3}, false, TrainingMode::kSync).ok());
  ASSERT_TRUE(Init("b", kJobB, 1, {2, 3}, false, TrainingMode::kSync).ok());
  ASSERT_TRUE(Call("b", kJobB, Push(0.5f, /*step=*/0)).ok());
  ASSERT_EQ(recorded_.notices.size(), 1u);
  EXPECT_EQ(recorded_.notices[0], (std::pair<int, int64_t>{5000 + kJobB, 0}));
}

TEST(ContainerNameTest, NamesThatMakeAFolderAreAccepted) {
  EXPECT_TRUE(CheckContainerName("sweep-01.lr_0.1").ok());
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", "a/b", "a b", std::string(65, 'x')}) {
    const Status s = CheckContainerName(bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("is not a container name"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace pst
