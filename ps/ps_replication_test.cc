// Replicated shards over the in-process transport (docs/DESIGN.md,
// "Replicated shards"): a push is acknowledged once the backups hold it;
// a retried push id is not applied twice; a promoted backup goes on from
// the primary's state; a deposed primary cannot write; a new backup is
// filled while pushes go on. No processes.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "model/layers/initializer.h"
#include "ps/ps_client.h"
#include "ps/shard_admin.h"
#include "ps/testing/in_process_shards.h"

namespace pst {
namespace {

constexpr uint64_t kCluster = 91;
constexpr int kShipTimeoutMs = 300;

// Routes the test sets, as the chief would say them.
class FakeRoutes : public RouteSource {
 public:
  explicit FakeRoutes(std::vector<ShardChain> chains) : chains_(std::move(chains)) {}
  StatusOr<std::vector<ShardChain>> FetchRoutes() override {
    MutexLock lock(mu_);
    ++fetches_;
    return chains_;
  }
  int fetches() const {
    MutexLock lock(mu_);
    return fetches_;
  }
  void Set(const ShardChain& chain) {
    MutexLock lock(mu_);
    chains_[chain.shard] = chain;
  }
  std::vector<ShardChain> chains() const {
    MutexLock lock(mu_);
    return chains_;
  }

 private:
  mutable Mutex mu_;
  std::vector<ShardChain> chains_;
  int fetches_ = 0;
};

std::vector<ShardChain> HomeChains() { return {{0, 1, 0, {1}}, {1, 1, 1, {2}}, {2, 1, 2, {0}}}; }

class PsReplicationTest : public ::testing::Test {
 protected:
  PsReplicationTest() {
    // global_step and "c" on shard 0, "a" on 1, "b" on 2.
    auto placement = Placement::Compute(WithGlobalStep({{"a", DType::kFloat32, {3}},
                                                        {"b", DType::kFloat32, {3}},
                                                        {"c", DType::kFloat32, {3}}}),
                                        PlacementOptions{3});
    EXPECT_TRUE(placement.ok());
    placement_ = std::make_unique<Placement>(*placement);
    for (const VariableSpec& spec : placement_->variables()) {
      values_.push_back(InitializeVariable(spec, 1));
    }
    for (int v = 1; v < 4; ++v) {
      for (int i = 0; i < 3; ++i) values_[v].f32()[i] = 1.0f;
    }
    config_.optimizer.name = "sgd";
    config_.optimizer.learning_rate = 1.0f;
    config_.global_step_variable = kGlobalStepName;
    chief_ = Client(&routes_, wire::Role::Chief);
    EXPECT_TRUE(ShardAdmin(&*chief_).Initialize(config_, values_).ok());
    EXPECT_TRUE(ShardAdmin(&*chief_).SendChains(routes_.chains(), Deadline()).ok());
  }

  std::unique_ptr<PsClient> Client(RouteSource* routes, wire::Role role = wire::Role::Worker,
                                   int index = 0) {
    std::unique_ptr<PsClient> client = shards_.Client(*placement_, kCluster, role, index);
    client->RouteByChains(routes);
    return client;
  }
  static MonotonicClock::TimePoint Deadline() {
    return SteadyClock().Now() + std::chrono::seconds(2);
  }
  // The chief's change of a chain: to the replicas it names, then routes.
  void Change(const ShardChain& chain) {
    const Status sent = ShardAdmin(&*chief_).SendChains({chain}, Deadline());
    ASSERT_TRUE(sent.ok()) << sent.ToString();
    routes_.Set(chain);
  }
  // Variable v (1: a, 3: c) as a client routed by `routes` reads it.
  std::vector<float> Read(RouteSource* routes, int v) {
    std::vector<Tensor> values;
    Status pulled = Client(routes)->Pull({v}, &values);
    EXPECT_TRUE(pulled.ok()) << pulled.ToString();
    if (!pulled.ok()) return {};
    return {values[0].f32(), values[0].f32() + 3};
  }
  StatusOr<PushSummary> PushOnes(PsClient& client, std::vector<int> variables = {1, 2, 3}) {
    std::vector<Tensor> grads;
    for (int v : variables) {
      Tensor g(DType::kFloat32, {3});
      for (int i = 0; i < 3; ++i) g.f32()[i] = 0.25f;
      grads.push_back(g);
    }
    return client.Push(variables, grads, /*increment_global_step=*/true);
  }
  // A raw push of 0.25s to "c" (shard 0) at ps `task`, routed by `epoch`,
  // with push id (worker 0, incarnation 7, `sequence`, `part`).
  StatusOr<ReceivedMessage> RawPush(int task, int64_t epoch, uint64_t sequence, uint32_t part = 0) {
    OutgoingMessage m;
    m.type = wire::MessageType::PushRequest;
    Tensor g(DType::kFloat32, {3});
    for (int i = 0; i < 3; ++i) g.f32()[i] = 0.25f;
    m.tensors.push_back({"c", 0, g});
    m.extras = [sequence, part](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.push = wire::CreatePushParams(fbb, false, 0, 7, sequence, part);
      return extras;
    };
    return shards_.Connect(task, kCluster)->Call(ReplicaRouter::Routed(m, 0, epoch));
  }

  InProcessShards shards_{3, nullptr, nullptr, {}, /*replicated=*/true, kShipTimeoutMs};
  std::unique_ptr<Placement> placement_;
  std::vector<Tensor> values_;
  ShardConfig config_;
  FakeRoutes routes_{HomeChains()};
  std::unique_ptr<PsClient> chief_;
};

TEST_F(PsReplicationTest, APromotedBackupHoldsEveryAcknowledgedPush) {
  auto worker = Client(&routes_);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(PushOnes(*worker).ok());
  // ps:0 is gone: its backup ps:1 takes shard 0 over, and shard 2 goes on
  // without its backup.
  shards_.server(0).Stop();
  Change({0, 2, 1, {}});
  Change({2, 2, 2, {}});
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0, 0, 0}));  // 1 - 4 * 0.25
  EXPECT_EQ(Client(&routes_)->GlobalStep().value(), 4);
  // The worker's next push goes to the new primary.
  StatusOr<PushSummary> next = PushOnes(*worker);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{-0.25, -0.25, -0.25}));
}

// A backup that does not answer holds every push back: an acknowledged push
// is on every replica of the chain. Once the chief takes it out, the push
// is acknowledged, applied once.
TEST_F(PsReplicationTest, APushWaitsForTheBackupsOfTheChain) {
  shards_.server(1).Stop();  // shard 0's backup
  auto worker = Client(&routes_);
  std::future<StatusOr<PushSummary>> push =
      std::async(std::launch::async, [&] { return PushOnes(*worker, {3}); });
  EXPECT_EQ(push.wait_for(std::chrono::milliseconds(3 * kShipTimeoutMs)),
            std::future_status::timeout);
  Change({0, 2, 0, {}});
  StatusOr<PushSummary> pushed = push.get();
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.75, 0.75, 0.75}));
}

TEST_F(PsReplicationTest, AnAcknowledgedPushRetriedAfterAFailoverIsNotAppliedAgain) {
  StatusOr<ReceivedMessage> first = RawPush(0, 1, 1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  shards_.server(0).Stop();
  Change({0, 2, 1, {}});
  StatusOr<ReceivedMessage> retry = RawPush(1, 2, 1);  // its reply was lost: sent again
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_TRUE(retry->header().push_result()->duplicate());
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.75, 0.75, 0.75}));
  ASSERT_TRUE(RawPush(1, 2, 2).ok());  // the next one applies
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.5, 0.5, 0.5}));
}

// A worker keeps two pushes in flight (PushLedger::kPushesInFlight): the
// second goes out, and its pull comes back, while the first still waits
// for the backups; a third waits for room.
TEST_F(PsReplicationTest, TwoPushesOfAWorkerAreInFlightAtOnce) {
  shards_.server(1).Stop();  // shard 0's backup: no push to it is acknowledged
  auto worker = Client(&routes_);
  EXPECT_EQ(worker->max_pushes_in_flight(), 2u);
  Tensor g(DType::kFloat32, {3});
  for (int i = 0; i < 3; ++i) g.f32()[i] = 0.25f;
  std::vector<Tensor> values;
  ASSERT_TRUE(worker->StartPushThenPull({3}, {g}, false, {3}, &values).ok());
  EXPECT_EQ(values[0].f32()[0], 0.75f);
  ASSERT_TRUE(worker->StartPushThenPull({3}, {g}, false, {3}, &values).ok());
  EXPECT_EQ(values[0].f32()[0], 0.5f);
  EXPECT_EQ(worker->StartPushThenPull({3}, {g}, false, {3}, &values).code(),
            Code::kFailedPrecondition);
  std::future<StatusOr<std::optional<PushSummary>>> acked =
      std::async(std::launch::async, [&] { return worker->FinishPush(); });
  EXPECT_EQ(acked.wait_for(std::chrono::milliseconds(3 * kShipTimeoutMs)),
            std::future_status::timeout);
  Change({0, 2, 0, {}});  // the chief takes the backup out
  StatusOr<std::optional<PushSummary>> summary = acked.get();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_TRUE(summary->has_value());
  // Each push applied once. One the worker sent again while its reply waited
  // for the backups (a slow machine) is acknowledged as a duplicate.
  EXPECT_EQ((*summary)->applied + (*summary)->duplicate_shards, 2u)
      << (*summary)->applied << " applied, " << (*summary)->duplicate_shards << " duplicates";
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.5, 0.5, 0.5}));
}

// Two pushes in flight when the primary was lost: the new primary may get
// the newer one first (the worker's waits send them again in any order).
// The older one still applies, once; a repeat of either is acknowledged
// without applying it again.
TEST_F(PsReplicationTest, TwoPushesInFlightRetriedInAnyOrderApplyOnce) {
  ASSERT_TRUE(RawPush(0, 1, 1).ok());
  shards_.server(0).Stop();
  Change({0, 2, 1, {}});
  StatusOr<ReceivedMessage> newer = RawPush(1, 2, 3);
  ASSERT_TRUE(newer.ok()) << newer.status().ToString();
  EXPECT_FALSE(newer->header().push_result()->duplicate());
  StatusOr<ReceivedMessage> older = RawPush(1, 2, 2);
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_FALSE(older->header().push_result()->duplicate());
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.25, 0.25, 0.25}));
  for (uint64_t sequence : {1, 2, 3}) {
    StatusOr<ReceivedMessage> retry = RawPush(1, 2, sequence);
    ASSERT_TRUE(retry.ok()) << retry.status().ToString();
    EXPECT_TRUE(retry->header().push_result()->duplicate()) << "push " << sequence;
  }
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.25, 0.25, 0.25}));
}

// A push streamed in parts: the shard applied part 1 before part 0 (part 0
// waited for a handler thread). Part 0 still applies, and after a failover
// the retries of both are acknowledged without applying them again.
TEST_F(PsReplicationTest, APushsPartsApplyInAnyOrderAndOnce) {
  ASSERT_TRUE(RawPush(0, 1, 1, /*part=*/1).ok());
  StatusOr<ReceivedMessage> overtaken = RawPush(0, 1, 1, /*part=*/0);
  ASSERT_TRUE(overtaken.ok()) << overtaken.status().ToString();
  EXPECT_FALSE(overtaken->header().push_result()->duplicate());
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.5, 0.5, 0.5}));
  shards_.server(0).Stop();
  Change({0, 2, 1, {}});
  for (uint32_t part : {0u, 1u}) {
    StatusOr<ReceivedMessage> retry = RawPush(1, 2, 1, part);
    ASSERT_TRUE(retry.ok()) << retry.status().ToString();
    EXPECT_TRUE(retry->header().push_result()->duplicate()) << "part " << part;
  }
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.5, 0.5, 0.5}));
}

// The chief tells the replicas and the workers of a new chain at once: a
// worker routed by it first is refused by a primary that has not adopted
// it yet. The routes do not change again; the push goes through once the
// primary holds the chain.
TEST_F(PsReplicationTest, APushRefusedByAReplicaBehindTheRoutesGoesThroughOnceItCatchesUp) {
  const ShardChain next{0, 2, 0, {1}};
  routes_.Set(next);  // the replicas do not know epoch 2 yet
  auto worker = Client(&routes_);
  std::future<StatusOr<PushSummary>> push =
      std::async(std::launch::async, [&] { return PushOnes(*worker, {3}); });
  EXPECT_EQ(push.wait_for(std::chrono::milliseconds(600)), std::future_status::timeout);
  ASSERT_TRUE(ShardAdmin(&*chief_).SendChains({next}, Deadline()).ok());
  ASSERT_EQ(push.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  StatusOr<PushSummary> pushed = push.get();
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{0.75, 0.75, 0.75}));
}

// The ids a worker's pushes carry: one sequence per push and shard, a part
// number per request of the push to that shard.
TEST(ReplicaRouterIdsTest, APushsRequestsToAShardShareItsSequence) {
  FakeRoutes routes(HomeChains());
  ReplicaRouter router(&routes, /*worker=*/4);
  router.StartPush();
  const PushId a0 = router.NextPushId(0), a1 = router.NextPushId(0), b0 = router.NextPushId(2);
  router.StartPush();
  const PushId next = router.NextPushId(0);
  EXPECT_EQ(a0.worker, 4);
  EXPECT_EQ(a1.incarnation, a0.incarnation);
  EXPECT_EQ(std::vector<uint64_t>({a0.sequence, a0.part, a1.sequence, a1.part}),
            std::vector<uint64_t>({1, 0, 1, 1}));
  EXPECT_EQ(std::vector<uint64_t>({b0.sequence, b0.part}), std::vector<uint64_t>({1, 0}));
  EXPECT_EQ(std::vector<uint64_t>({next.sequence, next.part}), std::vector<uint64_t>({2, 0}));
}

// ps:0 was only paused: it missed its demotion. The push it takes by the old
// epoch is refused by its backup, so it is never acknowledged, and ps:0
// serves no more.
TEST_F(PsReplicationTest, APausedPrimaryThatWasReplacedCannotWrite) {
  ShardChain promoted{0, 2, 1, {}};
  ASSERT_TRUE(ShardAdmin(&*chief_)
                  .SendChains({promoted}, Deadline())
                  .ok());  // ps:1 only: ps:0 is not named
  routes_.Set(promoted);
  StatusOr<ReceivedMessage> stale = RawPush(0, 1, 1);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(stale.status().message().find("deposed"), std::string::npos)
      << stale.status().ToString();
  StatusOr<ReceivedMessage> again = RawPush(0, 1, 2);
  EXPECT_EQ(again.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(Read(&routes_, 3), (std::vector<float>{1, 1, 1}));  // ps:1: nothing applied
  // A request routed by the new epoch to the old primary is refused too.
  EXPECT_EQ(RawPush(0, 2, 3).status().code(), Code::kFailedPrecondition);
}

TEST_F(PsReplicationTest, ANewBackupIsFilledWhilePushesGoOn) {
  auto worker = Client(&routes_);
  std::atomic<bool> stop{false};
  std::atomic<int> pushed{0};
  Status failed;
  std::thread pushes([&] {
    while (!stop.load()) {
      if (Status s = PushOnes(*worker, {3}).status(); !s.ok()) {
        failed = s;
        stop = true;
        return;
      }
      ++pushed;
    }
  });
  // Until `n` pushes are acknowledged, or the pushes failed.
  auto await_pushed = [&](int n) {
    while (pushed.load() < n && !stop.load()) std::this_thread::yield();
  };
  await_pushed(3);
  // ps:2 joins shard 0's chain: initialized, then named by the chain.
  const ShardChain grown{0, 2, 0, {1, 2}};
  routes_.Set(grown);
  ASSERT_TRUE(ShardAdmin(&*chief_).InitializeTask(2, config_, values_).ok());
  routes_.Set(HomeChains()[0]);  // workers keep epoch 1 until the chain is sent
  Change(grown);
  await_pushed(pushed.load() + 3);
  stop = true;
  pushes.join();
  ASSERT_TRUE(failed.ok()) << failed.ToString();
  const std::vector<float> on_primary = Read(&routes_, 3);
  const float expected = 1.0f - 0.25f * pushed.load();
  EXPECT_EQ(on_primary, (std::vector<float>{expected, expected, expected}));
  // Only ps:2 left of shard 0's replicas: it holds every push.
  shards_.server(0).Stop();
  shards_.server(1).Stop();
  Change({0, 3, 2, {}});
  EXPECT_EQ(Read(&routes_, 3), on_primary);
}

// The chief's own client (WhenRefused::kFail): its routes change only
// between its calls, so a request refused by a replica they still name
// fails at once (the chief then repairs the chains) instead of waiting for
// a change that cannot come; where they changed, it goes to the new primary.
TEST_F(PsReplicationTest, TheChiefsClientFailsAtOnceWhereItsRoutesSayTheSame) {
  FakeRoutes chiefs(HomeChains());
  std::unique_ptr<PsClient> chief = shards_.Client(*placement_, kCluster, wire::Role::Chief);
  chief->RouteByChains(&chiefs, WhenRefused::kFail);
  std::vector<Tensor> values;
  ASSERT_TRUE(chief->Pull({1}, &values).ok());  // "a", shard 1 at ps:1
  Change({1, 2, 2, {1}});                       // promoted at the ps, not in `chiefs`
  const int fetched = chiefs.fetches();
  EXPECT_EQ(chief->Pull({1}, &values).code(), Code::kFailedPrecondition);
  EXPECT_EQ(chiefs.fetches(), fetched + 1);  // looked once, found the same routes
  chiefs.Set({1, 2, 2, {1}});
  const Status pulled = chief->Pull({1}, &values);
  EXPECT_TRUE(pulled.ok()) << pulled.ToString();
}

TEST_F(PsReplicationTest, ReplicasReportTheirRoles) {
  auto worker = Client(&routes_);
  ASSERT_TRUE(PushOnes(*worker).ok());
  std::vector<ReplicaLoad> on_ps1 = shards_.service(1).ReplicaLoads();
  ASSERT_EQ(on_ps1.size(), 2u);  // shard 0's backup, shard 1's primary
  EXPECT_EQ(on_ps1[0].shard, 0);
  EXPECT_FALSE(on_ps1[0].primary);
  EXPECT_GE(on_ps1[0].shipments_taken, 1u);
  EXPECT_EQ(on_ps1[0].filled_at_epoch, 1);
  EXPECT_EQ(on_ps1[1].shard, 1);
  EXPECT_TRUE(on_ps1[1].primary);
  EXPECT_GE(on_ps1[1].rounds, 1u);
  EXPECT_GT(on_ps1[1].bytes_shipped, 0u);
}

// Sync: a push waits for its step, which needs another worker's gradient.
// A ps that stops meanwhile drops it: its replicator must not answer
// through a server already gone (under the sanitizers this failed as a
// use after free when the shards were torn down).
TEST(PsReplicationStopTest, AStoppingPsDropsAPushWaitingForItsStep) {
  auto shards =
      std::make_unique<InProcessShards>(2, nullptr, nullptr, std::vector<std::string>{}, true, 300);
  auto placement =
      Placement::Compute(WithGlobalStep({{"w", DType::kFloat32, {2}}}), PlacementOptions{2});
  ASSERT_TRUE(placement.ok());
  std::vector<Tensor> values;
  for (const VariableSpec& spec : placement->variables()) {
    values.push_back(InitializeVariable(spec, 1));
  }
  ShardConfig config;
  config.optimizer.learning_rate = 1.0f;
  config.global_step_variable = kGlobalStepName;
  config.mode = TrainingMode::kSync;
  config.replicas_to_aggregate = 2;
  FakeRoutes routes({{0, 1, 0, {1}}, {1, 1, 1, {0}}});
  auto chief = shards->Client(*placement, kCluster, wire::Role::Chief);
  chief->RouteByChains(&routes);
  ASSERT_TRUE(ShardAdmin(&*chief).Initialize(config, values).ok());
  ASSERT_TRUE(ShardAdmin(&*chief)
                  .SendChains(routes.chains(), SteadyClock().Now() + std::chrono::seconds(2))
                  .ok());
  auto worker = shards->Client(*placement, kCluster, wire::Role::Worker);
  worker->RouteByChains(&routes);
  std::future<Status> push = std::async(std::launch::async, [&] {
    return worker->SyncPush({1}, {Tensor(DType::kFloat32, {2})}, /*step=*/0).status();
  });
  EXPECT_EQ(push.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  shards.reset();  // the ps stop while the push waits
  EXPECT_FALSE(push.get().ok());
}

}  // namespace
}  // namespace pst
